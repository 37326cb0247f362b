"""Fault injection for the acceptance tests, installed into a worker from outside.

The production package holds no test hook: `python -m tests.support.worker ...` (what
the `workers` fixture starts) patches the points below in its process before it runs
`memsieve worker`, and the pool's children inherit the patches when they fork. Each hook
is a no-op unless its environment variable is set:

- `MEMSIEVE_FAULT_DELAY_EMBED=<seconds>`: sleep before each flush round's embedding, after
  the batch is claimed and before any vector exists (a kill here is "mid-embed").
- `MEMSIEVE_FAULT_DELAY_WRITE=<seconds>`: sleep inside the write transaction, after
  `pg_advisory_xact_lock` is held and the embedder checked, before the gate runs (a kill
  here is "mid-transaction"; a SIGSTOP here leaves the advisory lock held).
- `MEMSIEVE_FAULT_CRASH=<marker>`: the hashing embedder kills its own process (SIGKILL)
  on any batch holding a text that contains the marker (an input that crashes the worker).
- `MEMSIEVE_FAULT_POISON=<marker>`: the hashing embedder fails with a transient error on
  any batch holding a text that contains the marker, every time (a poison event: retrying
  never helps).

Each hook logs one WARNING line starting with "fault injection:" so that a test can wait
for a worker to reach the point before it kills or stops it.
"""

from __future__ import annotations

import functools
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

log = logging.getLogger("memsieve.faults")

DELAY_EMBED = "MEMSIEVE_FAULT_DELAY_EMBED"
DELAY_WRITE = "MEMSIEVE_FAULT_DELAY_WRITE"
POISON = "MEMSIEVE_FAULT_POISON"
CRASH = "MEMSIEVE_FAULT_CRASH"


def _pause(stage: str, seconds: float, events: int) -> None:
    log.warning(
        "fault injection: pausing %.2fs in %s (%d events, pid %d)",
        seconds,
        stage,
        events,
        os.getpid(),
    )
    time.sleep(seconds)


def _check(texts: Sequence[str], poison: str, crash: str) -> None:
    from memsieve import errors

    if poison and any(poison in t for t in texts):
        log.warning(
            "fault injection: poison input in a batch of %d (pid %d)", len(texts), os.getpid()
        )
        raise errors.TransientError("fault injection: embedder always times out on this input")
    if crash and any(crash in t for t in texts):
        log.warning("fault injection: crashing on a batch of %d (pid %d)", len(texts), os.getpid())
        os.kill(os.getpid(), signal.SIGKILL)


def install(env: Mapping[str, str] | None = None) -> list[str]:
    """Patch the hooks the environment asks for; returns the names of those installed."""
    env = os.environ if env is None else env
    installed = []
    delay_embed = float(env.get(DELAY_EMBED) or 0)
    delay_write = float(env.get(DELAY_WRITE) or 0)
    poison, crash = env.get(POISON, ""), env.get(CRASH, "")

    if delay_embed > 0:
        from memsieve.flow import embed

        original_embed: Callable[..., Any] = embed.embed_items

        @functools.wraps(original_embed)
        def embed_items(emb: Any, store: Any, items: Sequence[Any], *a: Any, **kw: Any) -> Any:
            _pause("embed", delay_embed, len(items))
            return original_embed(emb, store, items, *a, **kw)

        embed.embed_items = embed_items  # type: ignore[assignment]
        installed.append(DELAY_EMBED)

    if delay_write > 0:
        from memsieve.store.postgres import Store

        original_check = Store.check_embedder_in_tx

        def check_embedder_in_tx(cur: Any, model: str, dims: int) -> None:
            original_check(cur, model, dims)
            _pause("write", delay_write, 0)

        Store.check_embedder_in_tx = staticmethod(check_embedder_in_tx)  # type: ignore[method-assign]
        installed.append(DELAY_WRITE)

    if poison or crash:
        from memsieve.embedders.hashing import HashingEmbedder

        original: Callable[..., list[list[float]]] = HashingEmbedder.embed

        @functools.wraps(original)
        def hashing_embed(self: Any, texts: Sequence[str]) -> list[list[float]]:
            _check(texts, poison, crash)
            return original(self, texts)

        HashingEmbedder.embed = hashing_embed  # type: ignore[method-assign]
        installed.extend(n for n, v in ((POISON, poison), (CRASH, crash)) if v)
    return installed
