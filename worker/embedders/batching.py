"""Batch planning and per-input failure isolation, for any Embedder.

`plan_batches` packs texts into as few requests as the API limits allow; `embed_isolating`
embeds a whole backfill through them and turns one bad input into one failed event instead
of a failed batch: when a multi-input request is refused for its content, it is split in
halves until the offending input stands alone (about 2*log2(n) extra calls), or, when the
embedder names the index, the named input is tried alone and the rest is sent again.

Outcomes are values, one per text, in order: a vector or an `EmbedFailure`. Errors that say
nothing about any input (bad credentials, exhausted quota, unknown model) are raised as
`EmbedderRefused`: they are the operator's problem, and no event should be dead-lettered
for them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memsieve import errors
from memsieve.embedders import base
from memsieve.embedders.base import Embedder

Vector = base.Vector

# Machine-readable reasons carried by EmbedFailure.reason.
INPUT_TOO_LONG = "input_too_long"  # over the per-input token limit: refused before any call
INPUT_REJECTED = "input_rejected"  # the API refused this input alone (HTTP 400/413/422)
EMBEDDER_UNAVAILABLE = "embedder_unavailable"  # retries exhausted: try again later
NOT_ATTEMPTED = "not_attempted"  # skipped after an earlier batch failed transiently


class InputRejected(errors.PermanentError):
    """The request was refused because of its content: some input in it is bad.

    `index` is the offending input's position in the texts passed to embed(), when known.
    """


class EmbedderRefused(errors.PermanentError):
    """The embedder refuses all work (credentials, permissions, quota, model, dimensions).

    Not the fault of any input: splitting the batch cannot help, and events must stay pending
    until an operator fixes the configuration. `reason` is machine-readable.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class EmbedFailure:
    """Why one input got no vector. `permanent` decides: dead-letter vs stay pending."""

    index: int
    reason: str
    message: str
    permanent: bool
    retry_after: float | None = None


@runtime_checkable
class TokenLimited(Protocol):
    """Optional extension of Embedder for APIs that limit tokens (OpenAI does)."""

    max_request_tokens: int
    max_input_tokens: int

    def count_tokens(self, text: str) -> int: ...


def plan_batches(
    texts: Sequence[str],
    max_inputs: int,
    max_tokens: int,
    per_input_limit: int,
    count_tokens: Callable[[str], int],
) -> tuple[list[list[int]], list[int]]:
    """Split texts into batches of indices, in order, each within both request limits.

    Returns (batches, too_long): texts over `per_input_limit` tokens are in no batch.
    Greedy packing of consecutive texts is optimal for contiguous batches, so a backfill of
    N short texts takes ceil(N / max_inputs) requests.
    """
    if max_inputs < 1 or max_tokens < 1 or per_input_limit < 1:
        raise ValueError("batch limits must be positive")
    batches: list[list[int]] = []
    too_long: list[int] = []
    current: list[int] = []
    current_tokens = 0
    for i, text in enumerate(texts):
        n = count_tokens(text)
        if n > per_input_limit or n > max_tokens:
            too_long.append(i)
            continue
        if current and (len(current) >= max_inputs or current_tokens + n > max_tokens):
            batches.append(current)
            current, current_tokens = [], 0
        current.append(i)
        current_tokens += n
    if current:
        batches.append(current)
    return batches, too_long


class _Stop(Exception):
    """Internal: a batch failed transiently; leave the rest for a later attempt."""


def embed_isolating(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    stop_on_transient: bool = True,
) -> list[Vector | EmbedFailure]:
    """Embed every text in as few calls as the embedder's limits allow; one outcome per text.

    Token limits come from the embedder when it is `TokenLimited`, else only `max_batch`
    applies. On a TransientError the batch's texts fail with `embedder_unavailable`
    (permanent=False) and, with `stop_on_transient`, the remaining batches are not sent
    (`not_attempted`): an API that just exhausted its retries needs rest, not more load.
    Raises EmbedderRefused (see module docstring); other errors propagate.
    """
    if isinstance(embedder, TokenLimited):
        batches, too_long = plan_batches(
            texts,
            embedder.max_batch,
            embedder.max_request_tokens,
            embedder.max_input_tokens,
            embedder.count_tokens,
        )
        limit = embedder.max_input_tokens
    else:
        # No token limits: every text counts as 0 tokens against unbounded limits.
        batches, too_long = plan_batches(
            texts, embedder.max_batch, sys.maxsize, sys.maxsize, lambda _t: 0
        )
        limit = 0
    out: list[Vector | EmbedFailure | None] = [None] * len(texts)
    for i in too_long:
        out[i] = EmbedFailure(i, INPUT_TOO_LONG, f"input is over {limit} tokens", True)

    def run(idx: list[int]) -> None:
        try:
            vecs = embedder.embed([texts[i] for i in idx])
            if len(vecs) != len(idx):
                raise errors.TransientError(
                    f"embedder returned {len(vecs)} vectors for {len(idx)} texts"
                )
        except EmbedderRefused:
            raise
        except errors.TransientError as exc:
            for i in idx:
                out[i] = EmbedFailure(i, EMBEDDER_UNAVAILABLE, str(exc), False, exc.retry_after)
            if stop_on_transient:
                raise _Stop from exc
            return
        except errors.PermanentError as exc:
            if len(idx) == 1:
                out[idx[0]] = EmbedFailure(idx[0], INPUT_REJECTED, str(exc), True)
            elif exc.index is not None and 0 <= exc.index < len(idx):
                # Trust but verify: the named input goes alone, so a wrong index costs
                # one call instead of dead-lettering a good event.
                bad = idx[exc.index]
                run([bad])
                run([i for i in idx if i != bad])
            else:
                half = len(idx) // 2
                run(idx[:half])
                run(idx[half:])
            return
        for i, v in zip(idx, vecs, strict=True):
            out[i] = v

    try:
        for batch in batches:
            run(batch)
    except _Stop:
        pass
    return [
        o
        if o is not None
        else EmbedFailure(i, NOT_ATTEMPTED, "an earlier batch failed transiently", False)
        for i, o in enumerate(out)
    ]
