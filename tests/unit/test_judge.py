"""The guards' judge (the test embedder's default): same fact, update of one value, different fact."""

from __future__ import annotations

import pytest
from memsieve.gate import guards
from memsieve.gate.decide import Candidate, Incoming
from memsieve.gate.judge import GuardJudge, Judgement, Verdict, default_judge, guard_judge


def _pair(
    old: str, new: str, heading_old: str = "", heading_new: str = ""
) -> tuple[Incoming, Candidate]:
    inc = Incoming("ns", "pattern", heading_new, new, "h-new")
    cand = Candidate("m1", "pattern", heading_old, old, "h-old", 0.12)
    return inc, cand


def _verdict(old: str, new: str, **kw: str) -> Judgement:
    return guard_judge()([_pair(old, new, **kw)])[0]


def test_no_veto_is_same() -> None:
    j = _verdict(
        "Run the linter before you push.", "Always run the linter before pushing your branch."
    )
    assert j.verdict is Verdict.SAME
    assert j.judge == "guards"
    assert j.score == pytest.approx(0.88)
    assert j.vetoes == ()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Postgres listens on port 5432.", "Postgres listens on port 5433."),
        ("Deploys are frozen on Fridays.", "Deploys are frozen on Mondays."),
        ("Indent YAML with spaces.", "Indent YAML with tabs."),
        ("The tag must be app:stable.", "The tag must be app:latest."),
    ],
)
def test_one_value_changed_on_a_shared_subject_is_update(old: str, new: str) -> None:
    j = _verdict(old, new)
    assert j.verdict is Verdict.UPDATE
    assert j.detail.startswith("one value changed: ")
    assert len(j.vetoes) == 1


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # Negation and swapped roles are not a value change: different facts.
        ("Squash commits before merging.", "Never squash commits before merging."),
        ("Service A depends on service B.", "Service B depends on service A."),
        # Two values changed at once.
        ("Postgres 15 listens on port 5432.", "Postgres 16 listens on port 5433."),
        # One value each side but no shared subject.
        (
            "The billing export runs at 3 and emails finance.",
            "Cache warmers start at 4 after nightly reindexing jobs.",
        ),
    ],
)
def test_other_vetoes_are_different(old: str, new: str) -> None:
    j = _verdict(old, new)
    assert j.verdict is Verdict.DIFFERENT
    assert j.vetoes


def test_same_heading_is_a_shared_subject() -> None:
    j = _verdict(
        "Nightly backups start at 2.",
        "Backup job: it starts at 4 now.",
        heading_old="Backups",
        heading_new="backups",
    )
    assert j.verdict is Verdict.UPDATE


def test_one_judgement_per_pair_in_order() -> None:
    pairs = [
        _pair("Postgres listens on port 5432.", "Postgres listens on port 5433."),
        _pair("Run the linter before you push.", "Run the linter before pushing."),
        _pair("Squash commits before merging.", "Never squash commits before merging."),
    ]
    got = [j.verdict for j in guard_judge()(pairs)]
    assert got == [Verdict.UPDATE, Verdict.SAME, Verdict.DIFFERENT]
    assert guard_judge()([]) == []


def test_guard_judge_uses_only_its_guards() -> None:
    j = GuardJudge([guards.negation_guard])(
        [_pair("Postgres listens on port 5432.", "Postgres listens on port 5433.")]
    )[0]
    assert j.verdict is Verdict.SAME


def test_default_judge_per_setting_and_embedder() -> None:
    from memsieve.gate.judge_classifier import ClassifierJudge
    from memsieve.settings import Settings

    guards, classifier = Settings.from_env({"MEMSIEVE_JUDGE": "guards"}), Settings.from_env({})
    assert isinstance(default_judge(guards, embedder_model="all-MiniLM-L6-v2"), GuardJudge)
    assert isinstance(default_judge(classifier, embedder_model="hashing-v1-384"), GuardJudge)
    assert isinstance(default_judge(classifier, embedder_model="all-MiniLM-L6-v2"), ClassifierJudge)


def test_a_judge_other_than_guards_or_classifier_fails_at_start_up() -> None:
    from memsieve.errors import ConfigError
    from memsieve.settings import Settings

    with pytest.raises(ConfigError, match="MEMSIEVE_JUDGE must be one of guards, classifier"):
        Settings.from_env({"MEMSIEVE_JUDGE": "llm"})


def test_verdict_values_are_the_recorded_strings() -> None:
    assert [v.value for v in Verdict] == ["same", "update", "different"]
