"""Token alignment with the local model's contextual token vectors.

Each text is run once through all-MiniLM-L6-v2 (the offline embedder's model, on ONNX
Runtime: `memsieve.embedders.local`) and every word gets the mean of its word-piece vectors
from the last layer. A text the flush has just embedded is not run again: the local embedder
keeps the token vectors of the pass that gave its sentence vector. Two texts state the same fact
when every content word on each side aligns with some word on the other side: a synonym or a
rewording aligns (its contextual vector is close), a renamed entity, an antonym or an added
fact does not; an initialism aligns with its words (`memsieve.gate.judge_initials`). The
pair classifier turns the per-word best similarities into features. Word vectors are cached
per text, and a batch of texts is encoded in one forward pass.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
from memsieve.gate import judge_initials, judge_mid
from memsieve.gate import text as gtext

# What two words must share to count as one word (their keys), from the text analysis.
from memsieve.gate.text import word_key, word_keys

if TYPE_CHECKING:
    from memsieve.embedders.local import TokenVectors


@dataclass(frozen=True)
class WordVectors:
    """The words of one text (lower case, in order), which are content words, a unit vector each."""

    words: tuple[str, ...]
    content: tuple[bool, ...]
    vectors: np.ndarray  # (len(words), dims), float32, unit rows
    # No vectors from a model: words align only with themselves (LexicalTokenEncoder).
    lexical: bool = False
    # The model's sentence vector (mean of every token's vector, unit length: the
    # embedder's pooling), when a model made the word vectors.
    sentence: np.ndarray | None = None
    # Each word's unit vector from the model's middle layer, where the pass gave one.
    mid: np.ndarray | None = None

    # Computed once per text, not once per pair: a cached text meets many candidates.
    @cached_property
    def keys(self) -> np.ndarray:
        """Each word's `word_key` (object array; "" for a word that folds to nothing)."""
        return np.array(word_keys(self.words), dtype=object).reshape(-1)

    @cached_property
    def content_at(self) -> np.ndarray:
        """Positions of the content words."""
        return np.flatnonzero(np.array(self.content, dtype=bool))


class TokenEncoder(Protocol):
    """Texts -> their words and contextual word vectors."""

    name: str

    def encode(self, texts: Sequence[str]) -> list[WordVectors]: ...


@lru_cache(maxsize=65536)
def is_content(word: str) -> bool:
    """A word that carries meaning: not punctuation, not a symbol (an emoji, an arrow, a
    check mark: decoration, no fact), not a stopword."""
    if not any(c.isalnum() for c in word):
        return False
    return gtext.norm_word(word) not in gtext.STOPWORDS


class TokenShare(Protocol):
    """Token vectors shared between processes (`memsieve.embedders.token_share`)."""

    def get(self, texts: Sequence[str]) -> list[TokenVectors | None]: ...

    def put(self, tvs: Sequence[TokenVectors]) -> None: ...


class MiniLMTokenEncoder:
    """Contextual word vectors from the local embedder's model (loaded once per process)."""

    name = "all-MiniLM-L6-v2-tokens"

    def __init__(self, cache_size: int = 4096, threads: int = 0, model_cache: Path | None = None):
        """`threads`, `model_cache`: as for the local embedder, used if this encoder is the
        first in the process to load the model."""
        self.threads = threads
        self.model_cache = model_cache
        # By stripped text: a text's words, or the flush's token vectors (grouped on use).
        self._cache: OrderedDict[str, WordVectors | TokenVectors] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        # Set by the service: a text missing here is read from the share before the model
        # runs, and what this process embeds or computes is put there for the others.
        self.share: TokenShare | None = None

    def warm_up(self) -> None:
        """Load the model in this process now (a worker process calls this at start:
        behind the OpenAI embedder, nothing else loads it before the first close pair)."""
        from memsieve.embedders import local

        local.warm_up(self.threads, self.model_cache)

    def encode(self, texts: Sequence[str]) -> list[WordVectors]:
        keys = [t.strip() for t in texts]
        self.absorb()
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            fresh = self._fetch_or_encode(missing)
            with self._lock:
                for k, wv in zip(missing, fresh, strict=True):
                    self._cache[k] = wv
                    self._cache.move_to_end(k)
                self._trim()
        with self._lock:
            out = []
            for k in keys:
                hit = self._cache.get(k)
                if hit is not None and not isinstance(hit, WordVectors):
                    hit = self._cache[k] = word_vectors(hit)
                # Evicted by a huge batch: encode it alone.
                out.append(hit if hit is not None else self._encode([k])[0])
            return out

    def absorb(self) -> None:
        """Take the token vectors of every text the flush embedded since the last call: the
        incoming texts at hand, and the memories this worker writes, which come back later
        as candidates (then found here, not encoded again), and share them."""
        from memsieve.embedders import local

        kept = local.drain_tokens()
        new = []
        with self._lock:
            for tv in kept:
                if tv.text not in self._cache:
                    # Half precision while it waits: most are never a candidate, and
                    # 4,096 texts of ~30 tokens would hold ~150 MB in float32.
                    self._cache[tv.text] = half = _half(tv)
                    new.append(half)
                self._cache.move_to_end(tv.text)
            self._trim()
        if self.share is not None:
            self.share.put(new)

    def _fetch_or_encode(self, texts: list[str]) -> list[WordVectors]:
        """Word vectors of texts not in the cache: from the share where another process put
        them, else from the model (and then shared)."""
        found = self.share.get(texts) if self.share is not None else [None] * len(texts)
        todo = [t for t, f in zip(texts, found, strict=True) if f is None]
        made: dict[str, WordVectors] = {}
        if todo:
            from memsieve.embedders import local

            tvs = local.token_vectors(todo, self.threads, self.model_cache)
            if self.share is not None:
                self.share.put([_half(tv) for tv in tvs])
            made = {t: word_vectors(tv) for t, tv in zip(todo, tvs, strict=True)}
        return [
            word_vectors(f) if f is not None else made[t] for t, f in zip(texts, found, strict=True)
        ]

    def _trim(self) -> None:
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _encode(self, texts: list[str]) -> list[WordVectors]:
        from memsieve.embedders import local

        tvs = local.token_vectors(texts, self.threads, self.model_cache)
        return [word_vectors(tv) for tv in tvs]


def _half(tv: TokenVectors) -> TokenVectors:
    mid = None if tv.mid is None else tv.mid.astype(np.float16)
    return replace(tv, vectors=tv.vectors.astype(np.float16), mid=mid)


def word_vectors(tv: TokenVectors) -> WordVectors:
    """Group word pieces into words (mean vector, then unit length), by the tokenizer's
    word ids; a word's text is the span from its first piece's start to its last's end."""
    # A word's pieces are consecutive tokens: one run per word, summed in one call, in float32
    # (shared vectors wait in float16, whose sums numpy runs slowly, rounding at each step).
    vecs = tv.vectors.astype(np.float32, copy=False)
    pooled = vecs.mean(axis=0)
    sentence = pooled / max(float(np.linalg.norm(pooled)), 1e-9)
    positions = [i for i, wid in enumerate(tv.word_ids) if wid is not None]
    if not positions:
        empty = np.zeros((0, tv.vectors.shape[-1]), dtype=np.float32)
        return WordVectors((), (), empty, sentence=sentence, mid=None if tv.mid is None else empty)
    starts = [n for n, i in enumerate(positions) if n == 0 or tv.word_ids[i] != tv.word_ids[i - 1]]
    ends = [*starts[1:], len(positions)]
    found = tuple(
        tv.text[tv.offsets[positions[a]][0] : tv.offsets[positions[b - 1]][1]].lower()
        for a, b in zip(starts, ends, strict=True)
    )
    mat = _pooled(vecs, positions, starts)
    mid = None if tv.mid is None else _pooled(tv.mid.astype(np.float32), positions, starts)
    return WordVectors(found, tuple(is_content(w) for w in found), mat, sentence=sentence, mid=mid)


def _pooled(vecs: np.ndarray, positions: list[int], starts: list[int]) -> np.ndarray:
    """Each word's pieces summed, then unit length (the piece count divides out)."""
    mat = np.add.reduceat(vecs[positions], starts, axis=0)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return (mat / np.maximum(norms, 1e-9)).astype(np.float32, copy=False)


class LexicalTokenEncoder:
    """No model: one-hot word vectors (a word aligns only with itself, after folding case,
    plurals and suffixes). The fallback when the local model is not installed, and the
    encoder of the unit tests."""

    name = "lexical"

    def encode(self, texts: Sequence[str]) -> list[WordVectors]:
        out = []
        for t in texts:
            words = tuple(w.lower() for w in gtext._WORD.findall(t) or [t])  # noqa: SLF001
            keys = word_keys(words)
            vocab = {k: i for i, k in enumerate(dict.fromkeys(keys))}
            mat = np.zeros((len(words), max(1, len(vocab))), dtype=np.float32)
            for i, k in enumerate(keys):
                mat[i, vocab[k]] = 1.0
            out.append(WordVectors(words, tuple(is_content(w) for w in words), mat, lexical=True))
        return out


@dataclass(frozen=True)
class Alignment:
    """Per content word of each side: its best cosine similarity to any word of the other."""

    a_words: tuple[str, ...]
    a_best: np.ndarray
    b_words: tuple[str, ...]
    b_best: np.ndarray
    # Per content word of `a` found on both sides: the cosine of its two contextual vectors
    # (best over repeats). A word in another role has another context: "A depends on B" vs
    # "B depends on A" share every word, not every context. Empty when lexical.
    shared_context: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # The same at the model's middle layer (`memsieve.gate.judge_mid`), per content word of
    # `a` and per word of any kind. Empty when lexical or the pass gave no middle layer.
    mid_content: np.ndarray = field(default_factory=lambda: np.zeros(0))
    mid_any: np.ndarray = field(default_factory=lambda: np.zeros(0))


def align(a: WordVectors, b: WordVectors, lexical: bool = False) -> Alignment:
    """Align the content words of `a` and `b`, each against every word of the other; an
    identical word (after folding) always aligns fully, whatever its context."""
    if lexical or a.lexical or b.lexical or a.vectors.shape[1] != b.vectors.shape[1]:
        return _align_lexical(a, b)
    ia, ib = a.content_at, b.content_at
    shared = mid_content = mid_any = np.zeros(0)
    if len(a.words) and len(b.words):
        sims = a.vectors @ b.vectors.T
        same = judge_initials.same_words(a.words, a.keys, b.words, b.keys)
        rows = ia[same[ia].any(axis=1)]
        if len(rows):
            shared = np.where(same[rows], sims[rows], -np.inf).max(axis=1).astype(np.float64)
        if a.mid is not None and b.mid is not None:
            mid_content, mid_any = judge_mid.shared(a.mid, b.mid, a.content, same)
        sims = np.where(same, 1.0, sims)
        a_best = sims[ia].max(axis=1) if len(ia) else np.zeros(0)
        b_best = sims[:, ib].max(axis=0) if len(ib) else np.zeros(0)
    else:
        a_best, b_best = np.zeros(len(ia)), np.zeros(len(ib))
    return Alignment(
        tuple(a.words[i] for i in ia),
        np.asarray(a_best, dtype=np.float64),
        tuple(b.words[i] for i in ib),
        np.asarray(b_best, dtype=np.float64),
        shared,
        mid_content,
        mid_any,
    )


def _align_lexical(a: WordVectors, b: WordVectors) -> Alignment:
    keys_a, keys_b = set(word_keys(a.words)), set(word_keys(b.words))
    ia = [w for w, c in zip(a.words, a.content, strict=True) if c]
    ib = [w for w, c in zip(b.words, b.content, strict=True) if c]
    return Alignment(
        tuple(ia),
        np.array([1.0 if word_key(w) in keys_b else 0.0 for w in ia]),
        tuple(ib),
        np.array([1.0 if word_key(w) in keys_a else 0.0 for w in ib]),
    )
