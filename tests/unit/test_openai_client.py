"""One OpenAI client factory for the embedder and the LLM judge (embedders/openai_client)."""

from __future__ import annotations

import openai
import pytest
from memsieve import errors
from memsieve.embedders import openai_client


def test_a_client_per_process_with_retries_off(monkeypatch: pytest.MonkeyPatch) -> None:
    made = openai_client.PerProcess("sk-test", "http://127.0.0.1:9/v1", 7.0)
    first = made.get()
    assert made.get() is first
    assert (first.max_retries, first.timeout, str(first.base_url)) == (
        0,
        7.0,
        "http://127.0.0.1:9/v1/",
    )
    # A forked child (another pid) builds its own: no connection pool crosses fork().
    monkeypatch.setattr(openai_client.os, "getpid", lambda: -1)
    child = made.get()
    assert child is not first and made.get() is child


def test_a_given_client_is_used_in_its_process() -> None:
    given = openai.OpenAI(api_key="sk-test", max_retries=0)
    assert openai_client.PerProcess(None, None, 1.0, client=given).get() is given


def test_no_key_anywhere_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    made = openai_client.PerProcess(None, None, 1.0, what="OpenAI embedder")
    with pytest.raises(errors.ConfigError, match="^OpenAI embedder: "):
        made.get()
