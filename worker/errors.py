"""One exception root, two kinds: transient (retry later) and permanent (dead-letter)."""

from __future__ import annotations


class MemsieveError(Exception):
    """Root of every error memsieve raises on purpose."""


class ConfigError(MemsieveError):
    """A setting is missing or invalid; raised at start-up, before any work."""


class TransientError(MemsieveError):
    """Worth retrying: a timeout, a dropped connection, a 429 or 5xx."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(MemsieveError):
    """Retrying cannot help: bad input, bad credentials, exhausted quota.

    `index` names the offending input within a batch when it is known.
    """

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class EmbedderMismatch(ConfigError):
    """The worker's embedder does not match the vectors already in the store."""
