"""Exact variants read from the characters alone (`memsieve.gate.judge_variants`): what is the
same text, and every mark that carries a value kept apart."""

from __future__ import annotations

import numpy as np
import pytest
from memsieve.gate import judge_variants
from memsieve.gate.decide import Candidate, Incoming
from memsieve.gate.judge import Verdict
from memsieve.gate.judge_align import LexicalTokenEncoder
from memsieve.gate.judge_classifier import ClassifierJudge, Model, Weights
from memsieve.gate.judge_features import FEATURE_NAMES

# A model that never finds the same fact (bias -50): a SAME verdict comes from the rules alone.
_BIAS_ONLY = np.zeros(len(FEATURE_NAMES))
_BIAS_ONLY[FEATURE_NAMES.index("bias")] = -50.0
NEVER = Weights(Model(_BIAS_ONLY, 0.0), 0.5, None)


def _verdict(live: str, incoming: str) -> Verdict:
    pair = (
        Incoming("ns", "pattern", "", incoming, "h-new"),
        Candidate("m1", "pattern", "", live, "h-old", 0.1),
    )
    (j,) = ClassifierJudge(LexicalTokenEncoder(), NEVER)([pair])
    return j.verdict


@pytest.mark.parametrize(
    ("live", "incoming"),
    [
        ("Set x=1 in the worker config.", "set x = 1 in the worker config"),
        ("Run `make test` before pushing.", "Run make test before pushing"),
        ("The retry budget is 10% of requests.", "The retry budget is 10 % of requests."),
        (
            "Lesson: the linter runs before unit tests.",
            "Lesson - the linter runs before unit tests.",
        ),
        ("Note: pin the base image by digest.", "Pin the base image by digest."),
        ("Pin the base image by digest.", "[Reminder] Pin the base image by digest"),
        ("Migrations must be backwards compatible.", "Migrations must be backwards-compatible."),
        ("Call retry(a, b) on timeouts.", "Call retry(a,b) on timeouts."),
        ("Don't use the shared DB for load tests.", "Don’t use the shared DB, for load tests!"),
        (
            "Clear the CDN cahce after changing the favicon.",
            "Clear the CDN cache after changing the favicon.",
        ),
        ("PagerDuty escalates after 15 minuets.", "Pagerduty escalates after 15 minutes."),
        # a list item's number or bullet is its place in a list, not a value
        ("Pin the base image by digest.", "1. Pin the base image by digest."),
        ("3) Note: pin the base image by digest.", "* Pin the base image by digest."),
    ],
)
def test_exact_variants_are_the_same_fact(live: str, incoming: str) -> None:
    assert _verdict(live, incoming) is Verdict.SAME


@pytest.mark.parametrize(
    ("live", "incoming"),
    [
        ("Set x != 1 in the config.", "Set x = 1 in the config."),
        ("Require a >= b.", "Require a > b."),
        ("Pin the chart to v1.2.", "Pin the chart to v12."),
        ("Set the offset to -5.", "Set the offset to 5."),
        ("Run git push --force.", "Run git push force."),
        ("Open port 80 80.", "Open port 8080."),
        ("The job runs at 14:00 UTC.", "The job runs at 1400 UTC."),
        ("Keep 1,000 rows.", "Keep 1000 rows."),
        ("Deprecated: run make lint before PRs.", "Run make lint before PRs."),
        ("Update: run make lint before PRs.", "Run make lint before PRs."),
        ("Tip: x runs first.", "Tips: x runs first."),
        ("1.5 GB is the cap.", "GB is the cap."),
        ("3 retries are allowed.", "Retries are allowed."),
        # two words, not a misspelling; a replaced letter is never a typo
        ("Log the trial run.", "Log the trail run."),
        ("A casual link.", "A causal link."),
        ("Cache the parsing step.", "Cache the passing step."),
    ],
)
def test_marks_of_value_and_other_words_are_kept_apart(live: str, incoming: str) -> None:
    assert not judge_variants.surface_same(live, incoming)
    assert not judge_variants.typo_fixed(live, incoming)
    assert _verdict(live, incoming) is not Verdict.SAME
