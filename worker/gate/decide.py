"""The dedupe gate: incoming memory + live neighbours -> insert | supersede | merge.

Pure code: no I/O. The store finds the candidates and carries out the decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Action = Literal["insert", "supersede", "merge"]


@dataclass(frozen=True)
class Incoming:
    namespace: str
    kind: str
    heading: str
    content: str
    content_hash: str
    # For a correction that names the memory it replaces (explicit target).
    target_memory_id: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A live row of the same namespace, with its cosine distance to the incoming text."""

    memory_id: str
    kind: str
    heading: str
    content: str
    content_hash: str
    distance: float


@dataclass(frozen=True)
class Veto:
    """A guard's reason not to supersede a close candidate."""

    guard: str
    detail: str


@dataclass
class Considered:
    memory_id: str
    distance: float
    within_threshold: bool
    vetoes: list[Veto] = field(default_factory=list)


@dataclass
class GateDecision:
    action: Action
    target: str | None  # memory merged into / superseded; None for insert
    distance: float | None
    threshold: float
    reason: str
    considered: list[Considered] = field(default_factory=list)


class Guard(Protocol):
    """Checks a close pair; returns vetoes (empty: the supersede may go ahead)."""

    def __call__(self, incoming: Incoming, candidate: Candidate) -> list[Veto]: ...


def decide(
    incoming: Incoming,
    candidates: list[Candidate],
    threshold: float,
    guards: Sequence[Guard] = (),
) -> GateDecision:
    """Decide what to do with `incoming` given live candidates of its namespace.

    1. byte-identical live text (same content_hash) -> merge into it;
    2. the closest candidate under `threshold` that no guard vetoes -> supersede;
    3. otherwise insert. When in doubt, keep both rows.
    """
    for cand in candidates:
        if cand.content_hash == incoming.content_hash:
            return GateDecision(
                "merge", cand.memory_id, 0.0, threshold, "byte-identical live memory"
            )

    considered: list[Considered] = []
    ordered = sorted(candidates, key=lambda c: c.distance)
    # An explicit correction target overrides distance and guards: the producer said
    # which memory this corrects.
    if incoming.target_memory_id is not None:
        for cand in ordered:
            if cand.memory_id == incoming.target_memory_id:
                return GateDecision(
                    "supersede",
                    cand.memory_id,
                    cand.distance,
                    threshold,
                    "correction names this memory",
                    [Considered(cand.memory_id, cand.distance, cand.distance < threshold)],
                )

    for cand in ordered:
        within = cand.distance < threshold
        entry = Considered(cand.memory_id, cand.distance, within)
        considered.append(entry)
        if not within:
            continue
        for guard in guards:
            entry.vetoes.extend(guard(incoming, cand))
        if not entry.vetoes:
            return GateDecision(
                "supersede",
                cand.memory_id,
                cand.distance,
                threshold,
                f"distance {cand.distance:.4f} < threshold {threshold:.4f}",
                considered,
            )

    if any(c.vetoes for c in considered):
        vetoed = next(c for c in considered if c.vetoes)
        reason = "close candidate kept: " + "; ".join(
            f"{v.guard}: {v.detail}" for v in vetoed.vetoes
        )
    elif considered:
        reason = f"closest distance {considered[0].distance:.4f} >= threshold {threshold:.4f}"
    else:
        reason = "no live memory in namespace"
    return GateDecision("insert", None, None, threshold, reason, considered)


def decision_record(
    d: GateDecision, ev: Any, model: str, dims: int, k: int, guards: Sequence[Guard]
) -> dict[str, Any]:
    """What the gate saw and decided, stored with the row and the event (invariant 6).

    `ev` is the event written (its `target_memory` is recorded).
    """
    record: dict[str, Any] = {
        "action": d.action,
        "reason": d.reason,
        "threshold": d.threshold,
        "distance": d.distance,
        "target": d.target,
        "embedding_model": model,
        "embedding_dims": dims,
        "neighbours_searched": k,
        "explicit_target": ev.target_memory,
        "guards": [getattr(g, "__name__", type(g).__name__) for g in guards],
        "candidates": [
            {
                "memory_id": c.memory_id,
                "distance": round(c.distance, 6),
                "within_threshold": c.within_threshold,
                "vetoes": [{"guard": v.guard, "detail": v.detail} for v in c.vetoes],
            }
            for c in d.considered
        ],
    }
    if d.action == "merge":
        # Found by content hash before any vector search: the identical row is the
        # only candidate; record it so the merge can be explained.
        record["candidates"] = [
            {
                "memory_id": d.target,
                "distance": 0.0,
                "within_threshold": True,
                "identical": True,
                "vetoes": [],
            }
        ]
    return record
