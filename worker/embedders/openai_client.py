"""The one way memsieve builds an OpenAI client (the embedder and the LLM judge share it).

Built lazily, in the process that uses it: a Celery prefork child must not share its
parent's connection pool. The client's own retries are off (max_retries=0): the caller's
tenacity loop decides what is retried, how often and for how long.
"""

from __future__ import annotations

import os
import threading

import openai
from memsieve import errors


class PerProcess:
    """An OpenAI client per process. `client` (tests): used as is in this process."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        timeout: float,
        *,
        client: openai.OpenAI | None = None,
        what: str = "OpenAI client",
    ) -> None:
        self.api_key, self.base_url, self.timeout, self.what = api_key, base_url, timeout, what
        self._client = client
        self._pid = os.getpid() if client is not None else None
        self._lock = threading.Lock()

    def get(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None or self._pid != os.getpid():
                try:
                    self._client = openai.OpenAI(
                        api_key=self.api_key,
                        base_url=self.base_url,
                        timeout=self.timeout,
                        max_retries=0,  # the caller's tenacity loop owns retries
                    )
                except openai.OpenAIError as exc:  # no API key anywhere
                    raise errors.ConfigError(f"{self.what}: {exc}") from exc
                self._pid = os.getpid()
            return self._client
