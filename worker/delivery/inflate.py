"""Compressed message bodies, inflated with a cap.

kombu inflates a body whose `compression` header names a codec as it builds the message,
before any consumer sees it, with the codec's one-shot `decompress`: a 1 MB gzip bomb
became 1 GiB in the worker's consumer process (the parent of the pool), and only then met
`MEMSIEVE_MAX_MESSAGE_BYTES`. `install` replaces every codec kombu knows with one that
stops once the output passes the limit and raises `TooLarge`; the consumer records the
message as `message_too_large` and acks it (memsieve.delivery.consumer). A codec without a
way to stop early (brotli, zstd, when installed) is refused as `undecodable_message`.
memsieve's own producers never compress.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable
from typing import Any

from kombu import compression

# An xz stream names its own dictionary size (up to 1.5 GiB); xz's presets need 9 MiB (6,
# the default) to 65 MiB (9) to decompress.
LZMA_MEMLIMIT = 128 << 20


class TooLarge(ValueError):
    """The body inflates past the limit (the inflated size is never reached)."""

    def __init__(self, compressed: int, limit: int) -> None:
        super().__init__(f"compressed body of {compressed} bytes inflates past {limit} bytes")
        self.compressed = compressed
        self.limit = limit


class NotAccepted(ValueError):
    """A codec memsieve does not inflate (no way to stop it early)."""


def _capped(make: Callable[[], Any], limit: Callable[[], int]) -> Callable[[bytes], bytes]:
    """A decoder for `make()`'s decompressor objects (bz2, lzma: `max_length`,
    `needs_input`, `unused_data`), reading concatenated streams as the one-shot
    functions do, and raising `TooLarge` past `limit()` bytes."""

    def decode(body: bytes) -> bytes:
        cap = limit()
        out = bytearray()
        data = bytes(body)
        while data:
            d = make()
            chunk = d.decompress(data, max_length=cap + 1 - len(out))
            out += chunk
            if len(out) > cap or (not d.eof and not d.needs_input):
                raise TooLarge(len(body), cap)
            if not d.eof:
                raise ValueError("compressed data ended before the end of its stream")
            data = d.unused_data
        return bytes(out)

    return decode


def _zlib(limit: Callable[[], int]) -> Callable[[bytes], bytes]:
    def decode(body: bytes) -> bytes:
        cap = limit()
        d = zlib.decompressobj()
        out = d.decompress(bytes(body), cap + 1)
        if len(out) > cap or d.unconsumed_tail:
            raise TooLarge(len(body), cap)
        if not d.eof:
            raise zlib.error("compressed data ended before the end of its stream")
        return out

    return decode


def _refuse(name: str) -> Callable[[bytes], bytes]:
    def decode(body: bytes) -> bytes:
        raise NotAccepted(f"{name} bodies are not accepted")

    return decode


def install(limit: Callable[[], int]) -> None:
    """Put capped decoders in place of kombu's for every registered codec (idempotent).
    `limit()` gives the largest inflated body, read at each message (a setting)."""
    ours = {
        "application/x-gzip": _zlib(limit),
        "application/x-bz2": _capped(bz2.BZ2Decompressor, limit),
        "application/x-lzma": _capped(lambda: lzma.LZMADecompressor(memlimit=LZMA_MEMLIMIT), limit),
    }
    for content_type in list(compression._decoders):
        decoder = ours.get(content_type) or _refuse(content_type)
        compression._decoders[content_type] = decoder
