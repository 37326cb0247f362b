"""The feature `polarity_mismatch`: a negator and a word of prohibition agree ("never X" /
"X is off limits"); one of them on one side only does not."""

from __future__ import annotations

import pytest
from memsieve.gate import judge_markers
from memsieve.gate.judge_align import LexicalTokenEncoder, align
from memsieve.gate.judge_features import FEATURE_NAMES, pair_features


def _mismatch(a: str, b: str) -> float:
    enc = LexicalTokenEncoder()
    wa, wb = enc.encode([a, b])
    f = pair_features(a, b, 0.2, align(wa, wb), [])
    return float(f.values[FEATURE_NAMES.index("polarity_mismatch")])


@pytest.mark.parametrize(
    ("a", "b", "mismatch"),
    [
        ("Never force-push to main.", "Force-pushing to main is off limits.", 0.0),
        ("Do not log card numbers.", "Logging card numbers is forbidden.", 0.0),
        ("Avoid global state in handlers.", "Never keep global state in handlers.", 0.0),
        ("Force-pushing to main is allowed.", "Force-pushing to main is off limits.", 1.0),
        ("Log card numbers.", "Never log card numbers.", 1.0),
    ],
)
def test_a_prohibition_reads_as_a_negation(a: str, b: str, mismatch: float) -> None:
    assert _mismatch(a, b) == mismatch


def test_prohibitive_words() -> None:
    assert judge_markers.prohibits("Pushing to prod on Fridays is off-limits.")
    assert judge_markers.prohibits("Shell access is banned.")
    assert not judge_markers.prohibits("The bandwidth is limited.")


@pytest.mark.parametrize(
    ("text", "announced"),
    [
        ("Ahmed handed the quarterly security audit over to Grace.", True),
        ("Ana passed the on-call pager over to Ben.", True),
        ("The billing dashboards were reassigned to the data team.", True),
        ("Ownership of the repo was transferred to platform.", True),
        ("Ahmed runs the quarterly security audit.", False),
        ("Pass the token to the client.", False),
        ("Hand the flag to the job as an argument.", False),
    ],
)
def test_a_handover_said_around_its_object_announces_a_change(text: str, announced: bool) -> None:
    # (update, correction, reversal, change announced): an owner handed on is a new value
    assert judge_markers.markers(text)[3] is announced
