"""Backfill chunks: items cut into messages by count and by bytes; an item too large for
any message is recorded here, under its own ledger key, and never sent (its neighbours are).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memsieve.ops.backfill_read import Item

# A message of items ends at about this much JSON (as `memsieve enqueue` chunks), so one
# large item never takes its neighbours past MEMSIEVE_MAX_MESSAGE_BYTES with it.
CHUNK_BYTES = 1 << 20
# Room for the message's envelope and headers beside an item's JSON.
_ENVELOPE = 64 * 1024


def payload_bytes(item: Item) -> int:
    return len(json.dumps(item.payload, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def next_chunk(
    todo: Sequence[Item], start: int, size: int, max_bytes: int = CHUNK_BYTES
) -> tuple[int, list[int]]:
    """(end, the JSON size of each item of todo[start:end]): at most `size` items and about
    `max_bytes` of JSON, one item at least."""
    sizes: list[int] = []
    total = 0
    end = start
    while end < len(todo) and end - start < size:
        n = payload_bytes(todo[end])
        if sizes and total + n > max_bytes:
            break
        sizes.append(n)
        total += n
        end += 1
    return end, sizes


def take_chunk(
    store: Any,
    todo: Sequence[Item],
    start: int,
    size: int,
    finished: set[tuple[str, str, str | None]],
    settings: Any,
) -> tuple[int, list[Item], list[Item]]:
    """(end, the items of todo[start:end] to send, those recorded as too large): a chunk
    as `next_chunk` cuts it, without the items already finished."""
    max_message_bytes = settings.max_message_bytes
    end, sizes = next_chunk(todo, start, size)
    big = [
        (it, n)
        for it, n in zip(todo[start:end], sizes, strict=True)
        if too_large(n, max_message_bytes)
    ]
    if big:
        record_too_large(store, big, max_message_bytes)
    skip = {id(it) for it, _ in big}
    send = [it for it in todo[start:end] if it.key not in finished and id(it) not in skip]
    return end, send, [it for it, _ in big]


def too_large(size: int, max_message_bytes: int) -> bool:
    """An item no message can carry: it is recorded here, never sent."""
    return size > max_message_bytes - _ENVELOPE


def record_too_large(store: Any, items: Sequence[tuple[Item, int]], limit: int) -> None:
    """Record items too large for any message as refused (`invalid_event`), under their
    own ledger keys, so that the backfill counts them and their neighbours go on."""
    from memsieve.store.rows import InboxEvent

    store.insert_events(
        [
            InboxEvent(
                event_id=it.event_id,
                namespace=it.namespace or None,
                kind=None,
                heading=None,
                content=None,
                payload_hash=it.payload_hash or it.event_id,
                status="rejected",
                reason="invalid_event",
                detail=(
                    f"event of {size} bytes: larger than a message may be "
                    f"(MEMSIEVE_MAX_MESSAGE_BYTES={limit}); not sent"
                ),
            )
            for it, size in items
        ]
    )
