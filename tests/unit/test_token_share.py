"""The judge's token vectors shared between processes (memsieve.embedders.token_share)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest
from memsieve.embedders import local, token_share
from memsieve.embedders.local import TokenVectors
from memsieve.gate import judge_align
from memsieve.gate.judge_align import MiniLMTokenEncoder

TEXTS = ["Deploys run from the release branch.", "Tag releases after the deploy, not before."]


class DictShare:
    """The share's contract on a dict (what RedisTokenShare does on Redis)."""

    def __init__(self) -> None:
        self.items: dict[str, bytes] = {}
        self.asked: list[str] = []

    def get(self, texts: Sequence[str]) -> list[TokenVectors | None]:
        self.asked += texts
        return [token_share.loads(t, self.items[t]) if t in self.items else None for t in texts]

    def put(self, tvs: Sequence[TokenVectors]) -> None:
        self.items.update({tv.text: token_share.dumps(tv) for tv in tvs})


def test_bytes_round_trip_in_half_precision() -> None:
    (tv,) = local.token_vectors(TEXTS[:1])
    back = token_share.loads(tv.text, token_share.dumps(tv))
    assert back is not None
    assert back.vectors.dtype == np.float16
    np.testing.assert_array_equal(back.vectors, tv.vectors.astype(np.float16))
    assert tv.mid is not None and back.mid is not None  # the middle layer travels too
    np.testing.assert_array_equal(back.mid, tv.mid.astype(np.float16))
    assert (back.text, back.word_ids, back.offsets) == (tv.text, tv.word_ids, tv.offsets)
    assert token_share.loads(tv.text, b"garbage") is None
    assert token_share.loads(tv.text, token_share.dumps(tv)[:-1]) is None
    # Without a middle layer (a pass that gave none): the last layer alone, read back so.
    last = token_share.loads(tv.text, token_share.dumps(replace(tv, mid=None)))
    assert last is not None and last.mid is None
    np.testing.assert_array_equal(last.vectors, back.vectors)


def test_a_text_another_process_shared_is_not_run_through_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The writer's word vectors come from its half-precision copy (as kept in process);
    the reader gets the same words and vectors from the share, without a forward pass."""
    local.forget_tokens()
    share = DictShare()
    writer = MiniLMTokenEncoder()
    writer.share = share
    keeping = local.LocalEmbedder(keep_tokens=True)
    keeping.encode(TEXTS)  # the flush embeds its texts; the judge absorbs and shares them
    mine = writer.encode(TEXTS)
    assert sorted(share.items) == sorted(TEXTS)

    def no_model(*_: object, **__: object) -> list[TokenVectors]:
        raise AssertionError("the model ran for a shared text")

    monkeypatch.setattr(local, "token_vectors", no_model)
    reader = MiniLMTokenEncoder()
    reader.share = share
    theirs = reader.encode(TEXTS)
    for a, b in zip(mine, theirs, strict=True):
        assert a.words == b.words and a.content == b.content
        np.testing.assert_array_equal(a.vectors, b.vectors)
        assert a.mid is not None and b.mid is not None
        np.testing.assert_array_equal(a.mid, b.mid)


def test_a_text_nobody_shared_is_computed_once_and_shared() -> None:
    local.forget_tokens()
    share = DictShare()
    enc = MiniLMTokenEncoder()
    enc.share = share
    (got,) = enc.encode([TEXTS[1]])
    assert share.asked == [TEXTS[1]]
    assert list(share.items) == [TEXTS[1]]
    # This process keeps its own float32 pass; the share holds half precision.
    (fresh,) = local.token_vectors([TEXTS[1]])
    np.testing.assert_array_equal(got.vectors, judge_align.word_vectors(fresh).vectors)
    enc.encode([TEXTS[1]])
    assert share.asked == [TEXTS[1]]  # found in the process's own cache: not asked again


class Broken:
    def mget(self, keys: list[str]) -> list[bytes | None]:
        raise ConnectionError("redis is down")

    def pipeline(self, transaction: bool = False) -> Broken:
        raise ConnectionError("redis is down")


def test_redis_trouble_is_a_miss_never_a_failed_judgment(caplog: pytest.LogCaptureFixture) -> None:
    share = token_share.RedisTokenShare(Broken(), local.MODEL_NAME, 60)
    assert share.get(TEXTS) == [None, None]
    share.put(local.token_vectors(TEXTS[:1]))
    assert caplog.text.count("token share") == 1  # warned once per process
