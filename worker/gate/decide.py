"""The dedupe gate: incoming memory + live neighbours -> insert | supersede | merge.

Pure code: no I/O. The store finds the candidates and carries out the decision.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

log = logging.getLogger("memsieve.gate")

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
    judgement: Judgement | None = None


@dataclass
class GateDecision:
    action: Action
    target: str | None  # memory merged into / superseded; None for insert
    distance: float | None
    threshold: float
    reason: str
    considered: list[Considered] = field(default_factory=list)
    # Live memories the incoming one updates and does not supersede: linked as conflicts.
    conflicts: list[str] = field(default_factory=list)


class Guard(Protocol):
    """Checks a close pair; returns vetoes (empty: the supersede may go ahead)."""

    def __call__(self, incoming: Incoming, candidate: Candidate) -> list[Veto]: ...


class Verdict(StrEnum):
    SAME = "same"
    UPDATE = "update"
    DIFFERENT = "different"


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    score: float  # confidence in `verdict`, 0..1
    judge: str  # e.g. "guards", "classifier", "llm:gpt-4o-mini"
    detail: str  # short, human-readable, no secret
    # The guards' vetoes behind the verdict, when the judge ran guards (recorded with the
    # decision, per candidate). Optional: a judge that reads meaning may have none.
    vetoes: tuple[Veto, ...] = field(default=())


class Judge(Protocol):
    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]: ...


def decide(
    incoming: Incoming,
    candidates: list[Candidate],
    threshold: float,
    guards: Sequence[Guard] = (),
    judge: Judge | None = None,
    judged: Mapping[tuple[str, str], Judgement] | None = None,
    on_conflict: str = "keep",
    in_conflict: frozenset[str] = frozenset(),
) -> GateDecision:
    """Decide what to do with `incoming` given live candidates of its namespace.

    1. byte-identical live text (same content_hash) -> merge into it;
    2. a correction naming a live candidate -> supersede it (reason `update` when the
       candidate is in an open conflict, `in_conflict`: the correction settles it);
    3. every other candidate under `threshold` is judged (`memsieve.gate.judge`; default:
       the lexical `guards` as a judge): the closest judged the same fact is superseded
       (reason: the distance); candidates judged an update are linked as conflicts;
    4. no candidate judged the same fact, but updates: a correction judged an update of
       exactly one candidate, or `on_conflict="newest"`, supersedes the closest of them with
       reason `update`; otherwise insert, in conflict with each;
    5. otherwise insert. When in doubt, keep both rows.

    `judged` holds judgements made beforehand (the batch gate judges a whole batch in one
    call), keyed by (incoming content hash, candidate content hash); pairs missing from it
    are judged here, in one call.
    """
    for cand in candidates:
        if cand.content_hash == incoming.content_hash:
            reason = "byte-identical live memory"
            target = incoming.target_memory_id
            if target is not None and target != cand.memory_id:
                # Said, not silently dropped: the text is stored once, and a memory replaces
                # at most one other, so the named memory stays live (resolve or revert it).
                reason += (
                    f"; the correction's target {target} was not acted on: its text is already"
                    " live as this memory"
                )
            return GateDecision("merge", cand.memory_id, 0.0, threshold, reason)

    considered: list[Considered] = []
    ordered = sorted(candidates, key=lambda c: c.distance)
    # An explicit correction target overrides distance and guards: the producer said
    # which memory this corrects.
    if incoming.target_memory_id is not None:
        for cand in ordered:
            if cand.memory_id == incoming.target_memory_id:
                # The other close memories are judged as for any event: one the correction
                # updates (the other side of the target's open conflict, typically) stays
                # live beside it, linked as a conflict, not left as a silent contradiction.
                others = [c for c in ordered if c is not cand and c.distance < threshold]
                judgements = _judge(incoming, others, guards, judge, judged)
                considered = [Considered(cand.memory_id, cand.distance, cand.distance < threshold)]
                updated: list[str] = []
                for other in others:
                    j = judgements[other.memory_id]
                    considered.append(
                        Considered(other.memory_id, other.distance, True, list(j.vetoes), j)
                    )
                    if j.verdict == "update":
                        updated.append(other.memory_id)
                return GateDecision(
                    "supersede",
                    cand.memory_id,
                    cand.distance,
                    threshold,
                    "update" if cand.memory_id in in_conflict else "correction names this memory",
                    considered,
                    conflicts=updated,
                )

    close = [c for c in ordered if c.distance < threshold]
    # Past the threshold, up to the judge's update band, the nearest candidate of an event
    # that has none under it is judged for an update only: it may end as a conflict (both
    # rows live, linked), never as a supersede. One pair at most per event (the judge's
    # cost per event stays where it was when most events have close neighbours).
    far = band_candidate(ordered, threshold, judge, incoming)
    judgements = _judge(incoming, close + ([far] if far else []), guards, judge, judged)
    same: Candidate | None = None
    updates: list[Candidate] = []
    far_updates: list[Candidate] = []
    for cand in ordered:
        within = cand.distance < threshold
        entry = Considered(cand.memory_id, cand.distance, within)
        considered.append(entry)
        if not within:
            if cand is far and links_far(judgements[cand.memory_id]):
                entry.judgement = judgements[cand.memory_id]
                far_updates.append(cand)
            continue
        j = judgements[cand.memory_id]
        entry.judgement = j
        entry.vetoes.extend(j.vetoes)
        if j.verdict == "same":
            same = cand
            break
        if j.verdict == "update":
            updates.append(cand)
    if same is not None:
        # The farther close candidates that the incoming memory updates stay in conflict
        # with it (its supersede may close a conflict the hidden row was part of).
        for cand in ordered[len(considered) :]:
            if cand.distance >= threshold:
                break
            j = judgements[cand.memory_id]
            if j.verdict == "update":
                entry = Considered(cand.memory_id, cand.distance, True, list(j.vetoes), j)
                considered.append(entry)
                updates.append(cand)

    conflicts = [c.memory_id for c in updates + far_updates]
    if same is not None:
        return GateDecision(
            "supersede",
            same.memory_id,
            same.distance,
            threshold,
            f"distance {same.distance:.4f} < threshold {threshold:.4f}",
            considered,
            conflicts=conflicts,
        )
    if updates and (
        on_conflict == "newest" or (incoming.kind == "correction" and len(updates) == 1)
    ):
        won = updates[0]
        return GateDecision(
            "supersede",
            won.memory_id,
            won.distance,
            threshold,
            "update",
            considered,
            conflicts=conflicts[1:],
        )

    if updates or far_updates:
        linked = (updates or far_updates)[0]
        reason = (
            "update of a live memory kept as a conflict: " + judgements[linked.memory_id].detail
        )
    elif any(c.vetoes for c in considered):
        vetoed = next(c for c in considered if c.vetoes)
        reason = "close candidate kept: " + "; ".join(
            f"{v.guard}: {v.detail}" for v in vetoed.vetoes
        )
    elif any(c.judgement is not None for c in considered):
        first = next(c.judgement for c in considered if c.judgement is not None)
        reason = f"close candidate kept: {first.judge}: {first.detail}"
    elif considered:
        reason = f"closest distance {considered[0].distance:.4f} >= threshold {threshold:.4f}"
    else:
        reason = "no live memory in namespace"
    return GateDecision("insert", None, None, threshold, reason, considered, conflicts=conflicts)


def update_band(judge: Judge | None, incoming: Incoming | None = None) -> float:
    """How far past the threshold `judge` looks for updates: its `update_band` (0: not), and
    for an `incoming` text that says outright that a value changed ("moved to", "is now",
    "has been replaced"), at least its `announced_band`: such a text is an update, however
    far its wording lies from the old one."""
    band = float(getattr(judge, "update_band", 0.0) or 0.0)
    announced = float(getattr(judge, "announced_band", 0.0) or 0.0)
    if incoming is not None and announced > band and _announces_change(incoming):
        return announced
    return band


def _announces_change(incoming: Incoming) -> bool:
    from memsieve.gate.judge_markers import markers
    from memsieve.schemas.memory import memory_text

    return markers(memory_text(incoming.heading, incoming.content))[3]


def band_candidate(
    ordered: Sequence[Candidate],
    threshold: float,
    judge: Judge | None,
    incoming: Incoming | None = None,
) -> Candidate | None:
    """The nearest of `ordered` (sorted by distance) if it lies in `judge`'s update band for
    `incoming`, when none lies under the threshold; else None."""
    if not ordered or ordered[0].distance < threshold:
        return None
    band = update_band(judge, incoming)
    return ordered[0] if ordered[0].distance < threshold + band else None


def links_far(j: Judgement) -> bool:
    """A pair past the threshold judged an update, or the same fact (too far apart to hide
    one behind the other): linked as a conflict, both rows live."""
    return j.verdict in ("update", "same")


def _judge(
    incoming: Incoming,
    close: list[Candidate],
    guards: Sequence[Guard],
    judge: Judge | None,
    judged: Mapping[tuple[str, str], Judgement] | None,
) -> dict[str, Judgement]:
    """memory id -> judgement of each close candidate (missing ones judged in one call)."""
    out: dict[str, Judgement] = {}
    todo: list[Candidate] = []
    for c in close:
        j = judged.get((incoming.content_hash, c.content_hash)) if judged else None
        if j is None:
            todo.append(c)
        else:
            out[c.memory_id] = j
    if todo:
        if judge is None:
            judge = VetoJudge(guards)
        for c, j in zip(todo, ask_judge(judge, [(incoming, c) for c in todo]), strict=True):
            out[c.memory_id] = j
    return out


def ask_judge(judge: Judge, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
    """The judge's answers, or -- if it raises, or answers with the wrong count or with
    something that is not a Judgement -- "different" for every pair: when the judge fails,
    both rows stay (never a supersede), and the batch is still written."""
    if not pairs:
        return []
    name = str(getattr(judge, "name", getattr(judge, "__name__", type(judge).__name__)))
    try:
        got = list(judge(pairs))
        problem = None
        if len(got) != len(pairs):
            problem = f"{len(got)} answers for {len(pairs)} pairs"
        elif not all(isinstance(j, Judgement) and isinstance(j.verdict, Verdict) for j in got):
            problem = "an answer that is not a verdict"
    except Exception as exc:  # noqa: BLE001 - any judge failure keeps both rows
        log.warning("judge %s failed on %d pairs: %s", name, len(pairs), type(exc).__name__)
        problem = f"it raised {type(exc).__name__}"
    if problem is None:
        return got
    if "raised" not in problem:
        log.warning("judge %s gave %s", name, problem)
    detail = f"judge failed ({problem}): both rows kept"
    return [Judgement(Verdict.DIFFERENT, 0.0, name, detail) for _ in pairs]


class VetoJudge:
    """The guards alone as a judge: no veto is the same fact, a veto keeps both rows.
    (`memsieve.gate.judge.GuardJudge` adds the update rule on top.)"""

    name = "guards"
    # Cheap per pair: the batch gate asks it as pairs come up instead of judging the whole
    # batch's likely pairs beforehand (memsieve.gate.batch).
    batched = False

    def __init__(self, guards: Sequence[Guard]) -> None:
        self.guards = tuple(guards)

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
        return [self.judge_one(inc, cand) for inc, cand in pairs]

    def vetoes(self, incoming: Incoming, candidate: Candidate) -> tuple[Veto, ...]:
        return tuple(v for g in self.guards for v in g(incoming, candidate))

    def judge_one(self, incoming: Incoming, candidate: Candidate) -> Judgement:
        return self.verdict(candidate, self.vetoes(incoming, candidate))

    def verdict(self, candidate: Candidate, vetoes: tuple[Veto, ...]) -> Judgement:
        if not vetoes:
            closeness = max(0.0, min(1.0, 1.0 - candidate.distance))
            return Judgement(Verdict.SAME, closeness, self.name, "no guard vetoed")
        detail = "; ".join(f"{v.guard}: {v.detail}" for v in vetoes)
        return Judgement(Verdict.DIFFERENT, 0.8, self.name, detail, vetoes)


def decision_record(
    d: GateDecision,
    ev: Any,
    model: str,
    dims: int,
    k: int,
    guards: Sequence[Guard],
    judge: str = "guards",
    on_conflict: str = "keep",
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
        "judge": judge,
        "on_conflict": on_conflict,
        "conflicts": list(d.conflicts),
        "candidates": [_candidate_record(c) for c in d.considered],
    }
    # The verdict behind the action: the superseded candidate's, else (an insert) the
    # closest judged candidate's -- an update kept as a conflict, or a different fact.
    chosen = next((c for c in d.considered if c.memory_id == d.target), None)
    if chosen is None and d.action == "insert":
        judged = [c for c in d.considered if c.judgement is not None]
        updates = [c for c in judged if c.memory_id in d.conflicts]
        chosen = next(iter(updates or judged), None)
    if chosen is not None and chosen.judgement is not None:
        record["verdict"] = chosen.judgement.verdict.value
        record["score"] = chosen.judgement.score
        record["verdict_judge"] = chosen.judgement.judge
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


def _candidate_record(c: Considered) -> dict[str, Any]:
    out: dict[str, Any] = {
        "memory_id": c.memory_id,
        "distance": round(c.distance, 6),
        "within_threshold": c.within_threshold,
        "vetoes": [{"guard": v.guard, "detail": v.detail} for v in c.vetoes],
    }
    if c.judgement is not None:
        out["verdict"] = c.judgement.verdict.value
        out["score"] = round(c.judgement.score, 6)
        out["judge"] = c.judgement.judge
        out["judge_detail"] = c.judgement.detail
    return out
