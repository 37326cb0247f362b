"""Backfill chunks end at a count or at about CHUNK_BYTES of JSON (memsieve.ops.backfill_chunks)."""

from __future__ import annotations

from memsieve.ops.backfill_chunks import next_chunk, too_large
from memsieve.ops.backfill_read import Item


def _item(n: int, size: int) -> Item:
    return Item.of(
        {"namespace": "ns", "kind": "retro", "heading": f"h{n}", "content": "x" * size}, "t"
    )


def test_a_chunk_ends_at_its_count_or_its_bytes_and_holds_one_item_at_least() -> None:
    items = [_item(n, 300) for n in range(10)]
    assert next_chunk(items, 0, 4)[0] == 4
    end, sizes = next_chunk(items, 2, 100, max_bytes=1000)
    assert end - 2 == len(sizes) and sum(sizes) <= 1000 < sum(sizes) + sizes[0]
    huge = [_item(0, 5000), _item(1, 10)]
    assert next_chunk(huge, 0, 100, max_bytes=1000)[0] == 1  # alone, never with a neighbour
    assert next_chunk(items, 10, 4) == (10, [])


def test_an_item_too_large_for_any_message_is_not_sent() -> None:
    assert too_large(2_000_000, 1 << 20)
    assert not too_large(10_000, 1 << 20)
