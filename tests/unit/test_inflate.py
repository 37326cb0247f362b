"""Compressed bodies are inflated with a cap (memsieve.delivery.inflate): a bomb under the
wire limit is refused before it is inflated, not after."""

from __future__ import annotations

import bz2
import lzma
import tracemalloc
import zlib
from collections.abc import Iterator

import pytest
from kombu import compression
from memsieve.delivery import inflate

LIMIT = 1 << 20
CODECS = {
    "application/x-gzip": zlib.compress,
    "application/x-bz2": bz2.compress,
    "application/x-lzma": lzma.compress,
}


@pytest.fixture(autouse=True)
def capped() -> Iterator[None]:
    saved = dict(compression._decoders)
    inflate.install(lambda: LIMIT)
    yield
    compression._decoders.clear()
    compression._decoders.update(saved)


@pytest.mark.parametrize("content_type", list(CODECS))
def test_a_bomb_is_refused_without_inflating_it(content_type: str) -> None:
    bomb = CODECS[content_type](bytes(256 << 20))  # 256 MiB of zeros
    assert len(bomb) < LIMIT
    tracemalloc.start()
    try:
        with pytest.raises(inflate.TooLarge) as err:
            compression.decompress(bomb, content_type)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # kombu's own decoder held all 256 MiB; the capped one holds about the limit (and
    # lzma its 8 MiB dictionary).
    assert peak < 16 * LIMIT
    assert err.value.limit == LIMIT and err.value.compressed == len(bomb)


@pytest.mark.parametrize("content_type", list(CODECS))
def test_a_body_up_to_the_limit_inflates_as_before(content_type: str) -> None:
    body = b'[[{"heading": "h"}], {}, {}]' * 1000
    packed = CODECS[content_type](body)
    assert compression.decompress(packed, content_type) == body
    exact = bytes(LIMIT)
    assert compression.decompress(CODECS[content_type](exact), content_type) == exact
    # Aliases name the same codecs.
    assert compression.decompress(zlib.compress(body), "zlib") == body


def test_concatenated_streams_are_read_as_the_one_shot_functions_do() -> None:
    assert compression.decompress(bz2.compress(b"ab") + bz2.compress(b"cd"), "bzip2") == b"abcd"
    assert compression.decompress(lzma.compress(b"ab") + lzma.compress(b"cd"), "xz") == b"abcd"


@pytest.mark.parametrize("content_type", list(CODECS))
def test_a_truncated_body_is_an_error_not_a_short_body(content_type: str) -> None:
    packed = CODECS[content_type](b"lesson " * 5000)
    with pytest.raises(Exception) as err:
        compression.decompress(packed[: len(packed) // 2], content_type)
    assert not isinstance(err.value, inflate.TooLarge)


def test_an_xz_stream_that_asks_for_a_huge_dictionary_is_refused() -> None:
    filters = [{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 30}]
    packed = lzma.compress(b"small", format=lzma.FORMAT_XZ, filters=filters)
    with pytest.raises(lzma.LZMAError, match="[Mm]emory"):
        compression.decompress(packed, "application/x-lzma")


def test_a_codec_that_cannot_stop_early_is_not_accepted() -> None:
    saved = dict(compression._decoders)
    compression._decoders["application/x-brotli"] = lambda body: body
    try:
        inflate.install(lambda: LIMIT)
        with pytest.raises(inflate.NotAccepted, match="not accepted"):
            compression.decompress(b"anything", "application/x-brotli")
    finally:
        compression._decoders.clear()
        compression._decoders.update(saved)
