"""Embedders behind one small interface, chosen by MEMSIEVE_EMBEDDER."""

from __future__ import annotations

from typing import Any

from memsieve.embedders.base import Embedder
from memsieve.settings import Settings

__all__ = ["Embedder", "from_settings"]


def from_settings(
    settings: Settings, name: str | None = None, redis_client: Any = None
) -> Embedder:
    """Build the configured embedder (`name` overrides the setting, e.g. for reembed).

    With a Redis client, the openai embedder shares the MEMSIEVE_EMBED_RPM / _TPM budget
    with every other worker (worker.embedders.ratelimit).
    """
    name = name or settings.embedder
    if name == "hashing":
        from memsieve.embedders.hashing import HashingEmbedder

        return HashingEmbedder(settings.hashing_dims)
    if name == "local":
        from memsieve.embedders.local import LocalEmbedder

        # The classifier judge reads the token vectors of the texts the flush embeds.
        return LocalEmbedder(
            threads=settings.local_threads,
            cache=settings.model_cache,
            keep_tokens=settings.judge == "classifier",
        )
    if name == "openai":
        from memsieve.embedders.openai import OpenAIEmbedder
        from memsieve.embedders.ratelimit import RedisRateLimiter

        limiter = None
        if redis_client is not None and (settings.embed_rpm or settings.embed_tpm):
            limiter = RedisRateLimiter(
                redis_client, settings.openai_model, rpm=settings.embed_rpm, tpm=settings.embed_tpm
            )
        return OpenAIEmbedder(
            model=settings.openai_model,
            dims=settings.openai_dimensions,
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url,
            limiter=limiter,
        )
    raise ValueError(f"unknown embedder {name!r}")
