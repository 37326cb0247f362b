"""The converse of an order (`memsieve.gate.judge_converse`): "X before Y" is "Y after X";
"X before Y" / "X after Y" stays a flipped polarity, never the same fact."""

from __future__ import annotations

import pytest
from memsieve.gate import judge_converse, judge_shapes


@pytest.mark.parametrize(
    ("live", "incoming", "kept"),
    [
        (
            "Ask #platform-oncall before restarting any Kafka broker in production.",
            "Production Kafka brokers should only be restarted after checking with #platform-oncall.",
            True,
        ),
        ("Before deploying, run migrations.", "Deploy after running migrations.", True),
        ("Deploy before running migrations.", "Run migrations after deploying.", True),
        (
            "Run the checks prior to publishing a table.",
            "Tables are published after the checks.",
            True,
        ),
        # the operands keep their sides: the order flipped
        (
            "Run migrations before deploying the API.",
            "Run migrations after deploying the API.",
            False,
        ),
        ("Before deploying, run migrations.", "Run migrations after deploying.", False),
        (
            "Merge only after the security scan passes.",
            "Merge before the security scan passes.",
            False,
        ),
        # nothing shared to read the sides from
        ("Lint before tests.", "Deploy after review.", False),
    ],
)
def test_an_order_stated_from_its_other_end_is_no_flip(
    live: str, incoming: str, kept: bool
) -> None:
    words = judge_shapes.polar_words
    assert judge_converse.order_kept(words(live), words(incoming)) is kept
    assert (judge_shapes.polar_flips(live, incoming) == 0) is kept


def test_an_order_from_its_other_end_is_no_contrast_for_the_classifier() -> None:
    from memsieve.gate.decide import Veto
    from memsieve.gate.judge_features import split_vetoes

    before_after = Veto("contrast", "incoming has after; memory has before")
    live = "Run database migrations before deploying the new application code."
    same = "Deploy the new application code only after the database migrations have run."
    flipped = "Run database migrations after deploying the new application code."
    assert split_vetoes([before_after], live, same) == ((), ())
    assert split_vetoes([before_after], live, flipped) == ((), (before_after,))
    # another contrast beside the order stays
    other = Veto("contrast", "incoming has staging; memory has production")
    assert split_vetoes([before_after, other], live, same) == ((), (other,))
