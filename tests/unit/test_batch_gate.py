"""The batch gate as a pure function: inputs in, ordered decisions out, no database."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from memsieve.gate import guards
from memsieve.gate.batch import GateConfig, gate
from memsieve.gate.decide import Candidate, Incoming
from memsieve.gate.judge import Judgement, Verdict
from memsieve.gate.vectors import LiveSet, Row
from memsieve.schemas.memory import content_hash

D = 8


@dataclass(frozen=True)
class Ev:
    event_id: str
    content: str
    kind: str = "retro"
    target_memory: str | None = None
    namespace: str = "ns"
    heading: str = ""

    @property
    def content_hash(self) -> str:
        return content_hash(self.heading, self.content)


def v(*head: float) -> np.ndarray:
    out = np.zeros(D, np.float32)
    out[: len(head)] = head
    return out


def live_set(rows: list[tuple[str, str, np.ndarray]]) -> LiveSet:
    return LiveSet.build(
        D,
        [Row(mid, "retro", "", text, content_hash("", text)) for mid, text, _ in rows],
        np.vstack([r[2] for r in rows]) if rows else np.zeros((0, D), np.float32),
    )


def config(**kw: object) -> GateConfig:
    base: dict[str, object] = {
        "threshold_for": lambda kind: 0.3,
        "guards": tuple(guards.default_guards()),
        "model": "m",
        "dims": D,
    }
    base.update(kw)
    return GateConfig(**base)  # type: ignore[arg-type]


def run(events: list[Ev], vecs: list[np.ndarray], live: LiveSet, cfg: GateConfig) -> list:
    counter = itertools.count(1)
    res = gate(events, np.vstack(vecs), live, cfg, new_id=lambda: f"new-{next(counter)}")
    return res.decisions


def test_ordered_decisions_see_earlier_ones_and_leave_the_input_set_alone() -> None:
    live = live_set([("m1", "Postgres listens on port 5432.", v(1.0))])
    events = [
        Ev("e1", "Postgres listens on port 5432."),  # identical: merge
        Ev("e2", "Postgres listens on port 5433."),  # update: conflict with m1
        Ev("e3", "Postgres now listens on port 5433."),  # rewording of e2's new row
        Ev("e4", "Postgres now listens on port 5433."),  # identical to e3's new row
        Ev("e5", "Unrelated fact about caches."),
    ]
    vecs = [v(1.0), v(0.99, 0.14), v(0.98, 0.2), v(0.98, 0.2), v(0.0, 0.0, 1.0)]
    out = run(events, vecs, live, config())
    assert [(d.event_id, d.action, d.memory_id, d.supersedes) for d in out] == [
        ("e1", "merge", "m1", None),
        ("e2", "insert", "new-1", None),
        ("e3", "supersede", "new-2", "new-1"),
        ("e4", "merge", "new-2", None),
        ("e5", "insert", "new-3", None),
    ]
    assert [(c.older_id, c.newer_id) for c in out[1].conflicts] == [("m1", "new-1")]
    # e3 updates m1 too: the conflict moves to the rewording.
    assert [(c.older_id, c.newer_id) for c in out[2].conflicts] == [("m1", "new-2")]
    assert out[2].hides_hash == content_hash("", "Postgres listens on port 5433.")
    assert out[1].record["conflicts"] == ["m1"] and out[1].record["judge"] == "guards"
    assert live.alive.tolist() == [True] and live.n == 1  # the input is not modified


class Counting:
    name = "counting"

    def __init__(self, verdict: Verdict) -> None:
        self.verdict, self.calls, self.pairs = verdict, 0, 0

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
        self.calls += 1
        self.pairs += len(pairs)
        return [Judgement(self.verdict, 0.5, self.name, "x") for _ in pairs]


def test_the_judge_is_called_once_per_batch_on_the_close_pairs_only() -> None:
    live = live_set([("m1", "a", v(1.0)), ("m2", "far", v(0.0, 1.0))])
    judge = Counting(Verdict.DIFFERENT)
    events = [Ev("e1", "b"), Ev("e2", "c"), Ev("e3", "a")]
    out = run(events, [v(1.0, 0.05), v(1.0, 0.1), v(1.0)], live, config(judge=judge))
    assert judge.calls == 1
    # e1: m1; e2: m1 and e1's row; e3 is identical to m1 (a merge, never judged).
    assert judge.pairs == 3
    assert [d.action for d in out] == ["insert", "insert", "merge"]
    assert out[0].record["candidates"][0]["judge"] == "counting"


def test_on_conflict_newest_and_a_correction_supersede_with_reason_update() -> None:
    live = live_set([("m1", "x", v(1.0))])
    upd = Counting(Verdict.UPDATE)
    out = run([Ev("e1", "y")], [v(1.0, 0.1)], live, config(judge=upd, on_conflict="newest"))
    assert (out[0].action, out[0].supersedes, out[0].reason) == ("supersede", "m1", "update")
    out = run([Ev("e1", "y", kind="correction")], [v(1.0, 0.1)], live, config(judge=upd))
    assert (out[0].action, out[0].reason, out[0].conflicts) == ("supersede", "update", [])
    out = run([Ev("e1", "y")], [v(1.0, 0.1)], live, config(judge=upd))
    assert (out[0].action, [c.older_id for c in out[0].conflicts]) == ("insert", ["m1"])


def test_a_correction_naming_a_conflict_member_settles_it() -> None:
    live = live_set([("m1", "x", v(1.0)), ("m2", "y", v(0.0, 1.0))])
    ev = Ev("e1", "z", kind="correction", target_memory="m1")
    cfg = config(judge=Counting(Verdict.DIFFERENT))
    out = gate([ev], v(0.0, 0.0, 1.0)[None, :], live, cfg, in_conflict=frozenset({"m1"}))
    assert (out.decisions[0].supersedes, out.decisions[0].reason) == ("m1", "update")
    out = gate([ev], v(0.0, 0.0, 1.0)[None, :], live, cfg)
    assert out.decisions[0].reason == "correction names this memory"


class Broken:
    name = "broken"

    def __init__(self, how: str) -> None:
        self.how = how

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
        if self.how == "raise":
            raise TimeoutError("judge endpoint timed out")
        if self.how == "short":
            return []
        return ["same" for _ in pairs]  # type: ignore[misc]


@pytest.mark.parametrize(
    ("how", "problem"),
    [
        ("raise", "it raised TimeoutError"),
        ("short", "0 answers for 1 pairs"),
        ("garbage", "an answer that is not a verdict"),
    ],
)
def test_a_failing_judge_keeps_both_rows_and_says_so(how: str, problem: str) -> None:
    live = live_set([("m1", "x", v(1.0))])
    out = run([Ev("e1", "y")], [v(1.0, 0.1)], live, config(judge=Broken(how)))
    assert (out[0].action, out[0].conflicts) == ("insert", [])
    [cand] = out[0].record["candidates"]
    assert (cand["verdict"], cand["score"], cand["judge"]) == ("different", 0.0, "broken")
    assert cand["judge_detail"] == f"judge failed ({problem}): both rows kept"
    assert (
        out[0].reason == f"close candidate kept: broken: judge failed ({problem}): both rows kept"
    )


class ByText(Counting):
    """A deterministic judge (the verdict follows from the two texts) that judges
    `prejudge_extra` candidates past k ahead of time."""

    def __init__(self, extra: int) -> None:
        super().__init__(Verdict.DIFFERENT)
        self.prejudge_extra = extra

    def __call__(self, pairs: Sequence[tuple[Incoming, Candidate]]) -> list[Judgement]:
        self.calls += 1
        self.pairs += len(pairs)
        verdicts = (Verdict.SAME, Verdict.DIFFERENT, Verdict.UPDATE)
        return [
            Judgement(verdicts[(len(i.content) * 7 + len(c.content)) % 3], 0.5, self.name, "x")
            for i, c in pairs
        ]


def test_a_judge_without_prejudge_extra_makes_the_same_decisions_on_fewer_pairs() -> None:
    # Close vectors, k=1: supersedes inside the batch hide candidates, so farther rows come
    # up that the batch call did not foresee with no extra (they are judged on the spot).
    rng = np.random.default_rng(7)
    base = v(1.0)
    texts = ["x" * n for n in range(1, 60)]
    live = live_set(
        [(f"m{n}", texts[n], base + rng.normal(0, 0.15, D).astype(np.float32)) for n in range(12)]
    )
    events = [Ev(f"e{n}", texts[12 + n]) for n in range(40)]
    vecs = [base + rng.normal(0, 0.15, D).astype(np.float32) for _ in events]
    eager, lazy = ByText(2), ByText(0)
    first = run(events, vecs, live, config(judge=eager, k=1))
    second = run(events, vecs, live, config(judge=lazy, k=1))
    assert [(d.event_id, d.action, d.supersedes, d.reason) for d in second] == [
        (d.event_id, d.action, d.supersedes, d.reason) for d in first
    ]
    assert {d.action for d in first} >= {"supersede", "insert"}
    assert lazy.pairs < eager.pairs and lazy.calls > 1


class Banded(Counting):
    update_band = 0.2  # past the threshold (0.3), up to 0.5: judged for an update only


@pytest.mark.parametrize("verdict", [Verdict.UPDATE, Verdict.SAME])
def test_past_the_threshold_the_update_band_links_a_conflict_and_never_supersedes(
    verdict: Verdict,
) -> None:
    live = live_set([("m1", "x", v(1.0))])
    at_04 = v(0.6, 0.8)  # cosine distance 0.4 from m1: past 0.3, inside the band
    for kw in ({}, {"on_conflict": "newest"}):
        for kind in ("retro", "correction"):
            judge = Banded(verdict)
            out = run([Ev("e1", "y", kind=kind)], [at_04], live, config(judge=judge, **kw))
            assert judge.pairs == 1
            d = out[0]
            assert (d.action, d.supersedes) == ("insert", None), (kw, kind)
            assert [c.older_id for c in d.conflicts] == ["m1"]
            assert d.record["conflicts"] == ["m1"]
            assert d.reason.startswith("update of a live memory kept as a conflict")


def test_past_the_update_band_or_without_one_nothing_is_judged() -> None:
    live = live_set([("m1", "x", v(1.0))])
    far = v(0.4, 0.9165)  # distance 0.6: past the band
    judge = Banded(Verdict.UPDATE)
    out = run([Ev("e1", "y")], [far], live, config(judge=judge))
    assert (judge.pairs, out[0].action, out[0].conflicts) == (0, "insert", [])
    plain = Counting(Verdict.UPDATE)  # no update_band: only pairs under the threshold
    out = run([Ev("e1", "y")], [v(0.6, 0.8)], live, config(judge=plain))
    assert (plain.pairs, out[0].action, out[0].conflicts) == (0, "insert", [])
    # A different verdict inside the band links nothing.
    diff = Banded(Verdict.DIFFERENT)
    out = run([Ev("e1", "y")], [v(0.6, 0.8)], live, config(judge=diff))
    assert (diff.pairs, out[0].action, out[0].conflicts) == (1, "insert", [])


class Announcing(Counting):
    announced_band = 0.2  # only for a text that says a value changed


def test_an_announced_change_is_judged_past_the_threshold_and_a_plain_text_is_not() -> None:
    live = live_set([("m1", "Maria owns the billing service.", v(1.0))])
    at_04 = v(0.6, 0.8)  # cosine distance 0.4 from m1: past 0.3, inside the announced band
    moved = Ev("e1", "Billing service ownership moved to Devon as of this week.")
    judge = Announcing(Verdict.UPDATE)
    out = run([moved], [at_04], live, config(judge=judge))
    assert judge.pairs == 1
    assert (out[0].action, out[0].supersedes) == ("insert", None)
    assert [c.older_id for c in out[0].conflicts] == ["m1"]
    plain = Announcing(Verdict.UPDATE)
    out = run([Ev("e2", "Devon owns the billing service.")], [at_04], live, config(judge=plain))
    assert (plain.pairs, out[0].action, out[0].conflicts) == (0, "insert", [])
    # Past the announced band nothing is judged, even for an announced change.
    far = Announcing(Verdict.UPDATE)
    out = run([moved], [v(0.4, 0.9165)], live, config(judge=far))
    assert (far.pairs, out[0].conflicts) == (0, [])


def test_the_announced_band_never_narrows_the_judges_own_band() -> None:
    from memsieve.gate.decide import Incoming, update_band

    class Both(Counting):
        update_band, announced_band = 0.2, 0.1

    inc = Incoming("ns", "retro", "", "Billing moved to Devon.", "h")
    assert update_band(Both(Verdict.UPDATE), inc) == 0.2
    assert update_band(Announcing(Verdict.UPDATE), inc) == 0.2
    plain = Incoming("ns", "retro", "", "Devon owns billing.", "h")
    assert update_band(Announcing(Verdict.UPDATE), plain) == 0.0
    assert update_band(Announcing(Verdict.UPDATE)) == 0.0
