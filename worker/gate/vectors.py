"""The live vectors of one namespace in process memory, so the gate's search is a product.

Pure numpy, no I/O. `memsieve.store.gate_write` loads a `LiveSet` from Postgres under the
namespace's advisory lock, scores a whole batch against it in one matrix product, and
installs the batch's changes only after the transaction commits. `NamespaceCache` keeps
sets between batches, keyed by (namespace, model), and trusts one only while its version
equals the namespace's version row in Postgres (bumped by a trigger on every change to
`memories`, migration 050), so a write from another process or another tool is never
missed: the set is reloaded instead.

A copy behind the database's version is brought up to date with the rows changed since
(`memories.row_version`, migration 110; memsieve.store.gate_load), not reloaded whole:
another worker's batch costs this one its rows, not the namespace's.

Why not the database: an exact search reads every 1,536-d vector of the namespace out of
TOAST (~24 ms at 2,500 rows), and filtered HNSW is approximate, may return fewer rows
than asked, and costs ~2.5 ms of index maintenance per insert. A matrix product over
5,000 rows is a few milliseconds per event, or less than one per event for a batch, and
exact (recall 1.0).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

# Default process-wide budget for cached namespaces (MiB, MEMSIEVE_GATE_CACHE_MB); the
# least recently used go first.
CACHE_MB = 512.0


@dataclass(frozen=True)
class Row:
    memory_id: str
    kind: str
    heading: str
    content: str
    content_hash: str


def unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (float32). A zero row stays zero: similarity 0, distance 1."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(norms == 0, 1, norms)


def live_set_nbytes(n: int, dims: int) -> int:
    """What a `LiveSet` of n rows built from the database holds (`LiveSet.nbytes`)."""
    capacity = n + 64
    return capacity * dims * 4 + capacity + 400 * n


class LiveSet:
    """Live rows of one namespace and model: metadata, unit vectors, and a live mask."""

    def __init__(self, dims: int, capacity: int = 64) -> None:
        self.dims = dims
        self.rows: list[Row] = []
        self._mat = np.zeros((max(capacity, 1), dims), dtype=np.float32)
        self._alive = np.zeros(max(capacity, 1), dtype=bool)
        self.by_id: dict[str, int] = {}
        self.by_hash: dict[str, int] = {}  # live rows only

    @classmethod
    def build(cls, dims: int, rows: list[Row], vectors: np.ndarray) -> LiveSet:
        s = cls(dims, capacity=len(rows) + 64)
        if rows:
            s._mat[: len(rows)] = unit(vectors)
            s._alive[: len(rows)] = True
        s.rows = list(rows)
        s.by_id = {r.memory_id: i for i, r in enumerate(rows)}
        s.by_hash = {r.content_hash: i for i, r in enumerate(rows)}
        return s

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def matrix(self) -> np.ndarray:
        return self._mat[: self.n]

    @property
    def alive(self) -> np.ndarray:
        return self._alive[: self.n]

    @property
    def nbytes(self) -> int:
        return int(self._mat.nbytes + self._alive.nbytes + 400 * self.n)

    def append(self, row: Row, unit_vector: np.ndarray) -> None:
        i = self.n
        if i == len(self._mat):
            grow = max(64, i // 2)
            self._mat = np.vstack([self._mat, np.zeros((grow, self.dims), np.float32)])
            self._alive = np.concatenate([self._alive, np.zeros(grow, bool)])
        self._mat[i] = unit_vector
        self._alive[i] = True
        self.rows.append(row)
        self.by_id[row.memory_id] = i
        self.by_hash[row.content_hash] = i

    def upsert(self, row: Row, unit_vector: np.ndarray, alive: bool) -> None:
        """Apply one row as the database has it now (incremental reload): a row seen before
        is replaced, a row no longer live only hidden."""
        old = self.by_id.get(row.memory_id)
        if old is not None:
            self.kill(row.memory_id)
        if alive:
            self.append(row, unit_vector)

    def kill(self, memory_id: str) -> None:
        i = self.by_id.get(memory_id)
        if i is None or not self._alive[i]:
            return
        self._alive[i] = False
        if self.by_hash.get(self.rows[i].content_hash) == i:
            del self.by_hash[self.rows[i].content_hash]


def top_k(scores: np.ndarray, alive: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores among live entries, best first."""
    masked = np.where(alive, scores, -np.inf)
    live = int(alive.sum())
    if live == 0:
        return np.empty(0, dtype=np.intp)
    k = min(k, live)
    idx = np.argpartition(-masked, k - 1)[:k] if k < len(masked) else np.arange(len(masked))
    idx = idx[np.isfinite(masked[idx])]
    return idx[np.argsort(-masked[idx], kind="stable")]


def cosine_distance(a: np.ndarray, b: np.ndarray) -> float:
    """1 - cos(a, b) of two unit vectors, accumulated in float64 like pgvector's `<=>`."""
    return float(1.0 - np.dot(a.astype(np.float64), b.astype(np.float64)))


class NamespaceCache:
    """(namespace, model) -> (version, LiveSet), least recently used evicted past a budget."""

    def __init__(self, budget_mb: float = CACHE_MB) -> None:
        self.budget = int(budget_mb * 1024 * 1024)
        self._items: OrderedDict[tuple[str, str], tuple[int, LiveSet]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.loads = 0  # full loads from the database
        self.refreshes = 0  # copies brought up to date with only the rows changed since
        self.too_large = 0  # batches of a namespace over the budget, searched in SQL instead

    def fits(self, n: int, dims: int) -> bool:
        """Whether a namespace of n live rows of `dims` would be kept (the whole budget)."""
        return live_set_nbytes(n, dims) <= self.budget

    def peek(self, namespace: str, model: str) -> tuple[int, LiveSet] | None:
        """The cached copy at whatever version it is (to bring up to date), or None."""
        with self._lock:
            return self._items.get((namespace, model))

    def get(self, namespace: str, model: str, version: int) -> LiveSet | None:
        with self._lock:
            item = self._items.get((namespace, model))
            if item is None or item[0] != version:
                return None
            self._items.move_to_end((namespace, model))
            self.hits += 1
            return item[1]

    def put(self, namespace: str, model: str, version: int, live: LiveSet) -> None:
        """Keep `live` at `version`, evicting the least recently used others past the budget.

        A set larger than the whole budget is not kept, and costs the others nothing: it
        used to empty the cache of every namespace of the process on each of its writes.
        """
        key = (namespace, model)
        with self._lock:
            if live.nbytes > self.budget:
                self._items.pop(key, None)
                return
            self._items[key] = (version, live)
            self._items.move_to_end(key)
            total = sum(s.nbytes for _, s in self._items.values())
            while total > self.budget and len(self._items) > 1:
                _, (_, dropped) = self._items.popitem(last=False)
                total -= dropped.nbytes

    def drop(self, namespace: str, model: str) -> None:
        with self._lock:
            self._items.pop((namespace, model), None)
