"""Values said in shorthand (`memsieve.gate.shorthand`): a billion glued as "B", availability
in nines, a clock time placed by a part of the day; and contrasts of billing and of an
account's life. The sentences are the team's own, not the probe sets'."""

from __future__ import annotations

import pytest
from memsieve.gate import guards, shorthand
from memsieve.gate.decide import Candidate, Incoming


def _vetoes(old: str, new: str) -> list[str]:
    inc = Incoming("ns", "pattern", "", new, "h-new")
    cand = Candidate("m1", "pattern", "", old, "h-old", 0.01)
    return sorted({v.guard for g in guards.default_guards() for v in g(inc, cand)})


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("We distil the 13B model into a smaller one.",
         "We distil the 13 billion parameter model into a smaller one."),
        ("The embeddings table has 1.2B rows.", "The embeddings table has 1.2 billion rows."),
        ("The corpus is 40B tokens.", "The corpus is forty billion tokens."),
        ("The raise was $1.5B.", "The raise was $1.5 billion."),
        ("Checkout must stay at 99.95% or better; the API at 99.99%.",
         "Checkout must stay at 99.95% or better; the API at four nines."),
        ("Object storage promises 99.999% durability.",
         "Object storage promises five 9s of durability."),
        ("The 7B model needs 16 GB.", "The 7 billion parameter model needs 16 GB."),
        ("The cleanup cron runs at half past ten in the evening.",
         "The cleanup cron runs at 22:30."),
        ("Backups run at quarter to eight at night.", "Backups run at 19:45."),
        ("The digest goes out at half past seven in the morning.",
         "The digest goes out at 07:30."),
        ("The freeze lifts at half past two at night.", "The freeze lifts at 02:30."),
    ],
)  # fmt: skip
def test_the_same_value_in_shorthand_is_not_vetoed(old: str, new: str) -> None:
    assert _vetoes(old, new) == []


@pytest.mark.parametrize(
    ("old", "new", "guard"),
    [
        ("Serve the 7B model on one GPU.", "Serve the 70B model on one GPU.", "numbers"),
        ("The SLO is three nines.", "The SLO is four nines.", "numbers"),
        ("The SLO is 99.9%.", "The SLO is five nines.", "numbers"),
        ("The cleanup cron runs at half past ten in the evening.",
         "The cleanup cron runs at 10:30.", "dates"),
        ("Reports go out at six thirty in the evening.", "Reports go out at 6:30 am.", "dates"),
        ("Support plans are billed in advance.", "Support plans are billed in arrears.",
         "contrast"),
        ("Keys rotate 30 days after account creation.",
         "Keys rotate 30 days after account closure.", "contrast"),
    ],
)  # fmt: skip
def test_a_changed_value_in_shorthand_is_vetoed(old: str, new: str, guard: str) -> None:
    assert guard in _vetoes(old, new)


def test_a_bare_b_after_a_number_stays_bytes() -> None:
    # "512B" with no counted noun after it is a size, and a lower-case "b" is never a billion.
    assert shorthand.rewrite("The header is capped at 512B.") == "The header is capped at 512B."
    assert shorthand.rewrite("a 7b model") == "a 7b model"
    assert shorthand.rewrite("a 7B model") == "a 7 billion model"
    assert _vetoes("The header is capped at 512B.", "The header is capped at 512 bytes.") == []
