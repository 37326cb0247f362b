"""Vector space safety: a worker never mixes embedders; reembed moves a store atomically."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from memsieve import errors
from memsieve.embedders.hashing import HashingEmbedder
from memsieve.flow.pipeline import Pipeline
from memsieve.ops.reembed import reembed
from memsieve.settings import Settings
from memsieve.store.postgres import Store

from tests.support import cli as support_cli
from tests.support import db

LESSONS = [
    "Always pin the base image digest in Dockerfiles",
    "Flaky login tests came from a shared browser profile",
    "Run database migrations before deploying the API",
    "The billing service retries webhooks three times",
    "Never print environment variables in CI logs",
    "Prefer feature flags over long lived branches",
    "Staging certificates expire every ninety days",
    "Use kebab case for file names in the web app",
    "Cache invalidation bugs hide behind CDN defaults",
    "Ask the on call engineer before restarting queues",
]


def _fill(pipeline: Pipeline) -> None:
    pipeline.accept(
        [{"namespace": "ns", "kind": "pattern", "heading": "h", "content": c} for c in LESSONS]
    )
    pipeline.flush("ns")


def test_a_worker_with_another_embedder_is_refused(
    pipeline: Pipeline, settings: Settings, store: Store
) -> None:
    _fill(pipeline)
    other = Pipeline(replace(settings, hashing_dims=64), store=store)
    with pytest.raises(errors.EmbedderMismatch) as exc:
        other.ensure_bound()
    assert "holds hashing-v1-384 vectors (384 d)" in str(exc.value)
    assert "hashing-v1-64 (64 d)" in str(exc.value)


def test_reembed_is_resumable_and_switches_every_row_at_once(
    pipeline: Pipeline, settings: Settings, store: Store
) -> None:
    _fill(pipeline)
    target = HashingEmbedder(64)

    class Stop(Exception):
        pass

    seen: list[tuple[int, int]] = []

    def interrupt(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 4:
            raise Stop

    with pytest.raises(Stop):
        reembed(store, target, batch_size=4, progress=interrupt)
    # Interrupted after staging: nothing switched yet, recall still in the old space.
    assert store.bound_embedder() == {"model": "hashing-v1-384", "dims": 384}
    assert db.query(store, "SELECT DISTINCT embedding_model FROM memories") == [
        {"embedding_model": "hashing-v1-384"}
    ]

    calls_before = target.calls
    result = reembed(store, target, batch_size=4)
    assert (result.total, result.already_staged, result.staged_now) == (10, 4, 6)
    assert target.calls - calls_before == 2  # only the 6 unstaged rows, in batches of 4
    assert store.bound_embedder() == {"model": "hashing-v1-64", "dims": 64}
    rows = db.query(
        store,
        "SELECT embedding_model, embedding_dims, count(*)::int AS n FROM memories GROUP BY 1, 2",
    )
    assert rows == [{"embedding_model": "hashing-v1-64", "embedding_dims": 64, "n": 10}]
    assert db.query(store, "SELECT count(*)::int AS n FROM reembed_staging")[0]["n"] == 0

    # The old worker now refuses to write; its events stay pending.
    pipeline.accept(
        [
            {
                "namespace": "ns",
                "kind": "pattern",
                "heading": "h",
                "content": "A brand new lesson about kilo",
            }
        ]
    )
    with pytest.raises(errors.EmbedderMismatch):
        pipeline.store.write_batch(
            "ns",
            [(store.claim_pending("ns", 1)[0], [0.1] * 384)],
            "hashing-v1-384",
            384,
            lambda k: 0.35,
            [],
        )
    assert db.query(store, "SELECT status FROM events WHERE content LIKE %s", ("%kilo%",)) == [
        {"status": "pending"}
    ]
    # A worker with the new embedder writes it, searching the new space.
    new = Pipeline(replace(settings, hashing_dims=64), store=store)
    new.flush("ns")
    assert db.query(store, "SELECT status FROM events WHERE content LIKE %s", ("%kilo%",)) == [
        {"status": "written"}
    ]
    hits = store.recall("ns", target.embed([LESSONS[3]])[0], "hashing-v1-64", 1)
    assert hits[0]["content"] == LESSONS[3]


def test_reembed_cli_moves_the_store(env: dict[str, str], pipeline: Pipeline, store: Store) -> Any:

    _fill(pipeline)
    out = support_cli.run(env, "reembed", "--to", "hashing-v1-64", "--json")
    assert out.returncode == 0, out.stderr
    assert '"target": "hashing-v1-64"' in out.stdout
    assert store.bound_embedder() == {"model": "hashing-v1-64", "dims": 64}
