"""One text per memory: the gate's guards analyse what is embedded and hashed."""

from __future__ import annotations

from memsieve.gate import guards, text
from memsieve.schemas import events


def test_one_join_for_embedding_hashing_and_guards() -> None:
    assert guards.memory_text is events.memory_text
    assert events.memory_text("Deploys", "Run migrations first.") == (
        "Deploys\n\nRun migrations first."
    )


def test_the_blank_line_between_heading_and_content_ends_a_sentence() -> None:
    # "Always" opens the content's sentence: a capital there is no name. Inside a
    # sentence, "Postgres" is one.
    joined = text.analyse(events.memory_text("Deploys", "Always run migrations on Postgres."))
    assert joined.entities == frozenset({"postgres"})
    assert joined == text.analyse("Deploys. Always run migrations on Postgres.")
