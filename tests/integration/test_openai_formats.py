"""The real `openai` client against the fake server, in both answer formats.

We ask for base64 and decode it in numpy; a server that answers floats anyway (many
OpenAI-compatible servers do) gives the same float32 vectors, bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from memsieve import errors

from tests.support.openai_server import FakeOpenAI, Reply, make

TEXTS = [f"lesson {i}: retry the flaky deploy step {i} times" for i in range(40)]


def matrix(vectors: Any) -> np.ndarray:
    return np.vstack([np.asarray(v) for v in vectors])


@pytest.mark.parametrize("answer_format", ["request", "base64", "float"])
def test_same_float32_vectors_whatever_the_server_answers(
    fake_openai: FakeOpenAI, answer_format: str
) -> None:
    fake_openai.answer_format = "request"
    reference = matrix(make(fake_openai).embed(TEXTS))
    fake_openai.answer_format = answer_format
    fake_openai.reset_counters()
    got = make(fake_openai).embed(TEXTS)
    assert all(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in got)
    assert np.array_equal(matrix(got), reference)
    assert reference.shape == (40, 1536)
    # We always ask for base64: the format that costs no float parsing at all.
    assert [s.encoding for s in fake_openai.log] == ["base64"]
    assert np.allclose(np.linalg.norm(reference, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("answer_format", ["base64", "float"])
def test_dimensions_are_honoured_in_both_formats(
    fake_openai: FakeOpenAI, answer_format: str
) -> None:
    fake_openai.answer_format = answer_format
    got = make(fake_openai, dims=256).embed(TEXTS[:3])
    assert matrix(got).shape == (3, 256)


def test_a_garbled_answer_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(garble=True))
    emb = make(fake_openai)
    got = emb.embed(TEXTS[:4])
    assert len(got) == 4
    assert fake_openai.statuses() == [200, 200]
    assert emb.stats.requests == 2 and emb.stats.retries == 1


def test_garbled_answers_until_retries_run_out_are_transient(fake_openai: FakeOpenAI) -> None:
    fake_openai.push(Reply(garble=True), times=3)
    with pytest.raises(errors.TransientError):
        make(fake_openai, max_attempts=3).embed(TEXTS[:4])
    assert fake_openai.requests == 3


@pytest.mark.parametrize("answer_format", ["base64", "float"])
def test_slow_then_throttled_then_failing_then_good(
    fake_openai: FakeOpenAI, answer_format: str
) -> None:
    fake_openai.answer_format = answer_format
    fake_openai.push(Reply(delay=0.5))  # past the client's timeout
    fake_openai.push(Reply(status=429, retry_after_ms="5"))
    fake_openai.push(Reply(status=503))
    emb = make(fake_openai, timeout=0.2)
    got = emb.embed(TEXTS[:2])
    assert matrix(got).shape == (2, 1536)
    assert fake_openai.statuses() == [200, 429, 503, 200]
    assert emb.stats.retries == 3
