"""The judge's training data, shared by scripts/train_judge.py and scripts/judge_cv.py: the
training pairs (never a held-out split, never PAWS test), their grouping into folds, and
their MiniLM distances and word vectors, cached on disk.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


# The agent-memory training pairs (tests/data), all labelled three-way: never a held-out split.
PAIR_SOURCES = (
    ("eval", "eval_pairs.jsonl"),
    ("frozen1", "gate_pairs_frozen_test.jsonl"),
    ("train4", "gate_pairs_train4.jsonl"),
    ("train5", "gate_pairs_train5.jsonl"),
    # Held out once, measured three or four times each, retired to training since
    # (a new held-out split exists that the judge's engineers never see).
    ("frozen3", "gate_pairs_frozen3.jsonl"),
    ("frozen4", "gate_pairs_frozen4.jsonl"),
    # Held out in stops 22 and 23, measured on the results of their rounds, retired to
    # training in stop 24.
    ("frozen5", "gate_pairs_frozen5.jsonl"),
    ("frozen6", "gate_pairs_frozen6.jsonl"),
    ("frozen7", "gate_pairs_frozen7.jsonl"),
    ("train6", "gate_pairs_train6.jsonl"),
    # Held out in stop 24, measured five times (never tuned on, no error read), retired to
    # training in stop 25 (frozen9, newer, is held out).
    ("frozen8", "gate_pairs_frozen8.jsonl"),
    # Held out in stops 25-28 (frozen9-11 never read, frozen12-13 read as development sets),
    # retired to training in stop 30: frozen14 (never read), frozen15 (written in stop 30) and
    # frozen16 (written in stop 31) are held out, and so are frozen17-19 (stops 35, 36, 38).
    ("frozen9", "gate_pairs_frozen9.jsonl"),
    ("frozen10", "gate_pairs_frozen10.jsonl"),
    ("frozen11", "gate_pairs_frozen11.jsonl"),
    ("frozen12", "gate_pairs_frozen12.jsonl"),
    ("frozen13", "gate_pairs_frozen13.jsonl"),
    # Written in stop 31 as training data for the two classes the held-out sets' false
    # supersedes come from (role swaps, renamed entities), each beside hard rewordings of
    # its own shape (converse verbs and moved clauses, names written another way).
    ("train7", "gate_pairs_train7.jsonl"),
)

# PAWS pairs are Wikipedia sentences, not agent memories. Stop 30's grouped cross-validation
# (every PAWS dev pair, the agent sets through frozen13): at a PAWS precision of 0.90 out of
# fold, weight 1.0 with 32 hidden units found 0.597 of PAWS' paraphrases against 0.480 for
# every second pair at 0.15 with 16, at an agent-memory precision of 0.979 / 0.983 against
# 0.980 / 0.983 (the training sets / frozen9-13).
PAWS_WEIGHT = 1.0


@dataclass
class Item:
    a: str
    b: str
    label: str  # same | update | different
    category: str
    kind: str
    correction: bool
    source: str
    weight: float = 1.0


def load_items(
    paws_every: int, paws_dev: Path, extra: list[tuple[str, Path]], paws_weight: float = PAWS_WEIGHT
) -> list[Item]:
    from memsieve.ops import gate_quality

    items: list[Item] = []
    sources = [(name, ROOT / "tests/data" / file) for name, file in PAIR_SOURCES] + extra
    for source, path in sources:
        if not path.exists():
            continue
        for p in gate_quality.load(path):
            label = p.label
            # eval_pairs has boolean labels: its untargeted updates are updates.
            if source == "eval" and p.category == "update":
                label = "update"
            items.append(Item(p.a, p.b, label, p.category, p.kind, p.correction, source))
    paws = gate_quality.load(paws_dev)[::paws_every]
    items += [Item(p.a, p.b, p.label, "paws", "pattern", False, "paws", paws_weight) for p in paws]
    return items


def groups(items: list[Item]) -> np.ndarray:
    """Connected components of the pairs over their (folded) texts."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def key(t: str) -> str:
        return " ".join(t.lower().split()).rstrip(".")

    for it in items:
        ra, rb = find(key(it.a)), find(key(it.b))
        if ra != rb:
            parent[ra] = rb
    roots = [find(key(it.a)) for it in items]
    ids = {r: n for n, r in enumerate(dict.fromkeys(roots))}
    return np.array([ids[r] for r in roots])


def fold_of(group: np.ndarray, k: int, seed: int = 15) -> np.ndarray:
    rng = np.random.default_rng(seed)
    uniq = np.unique(group)
    perm = rng.permutation(len(uniq))
    by_group = dict(zip(uniq, perm % k, strict=True))
    return np.array([by_group[g] for g in group])


def cached(path: Path, make):  # type: ignore[no-untyped-def]
    if path.exists():
        return pickle.loads(path.read_bytes())
    value = make()
    path.write_bytes(pickle.dumps(value))
    return value


def embed_and_encode(items: list[Item], cache_dir: Path):  # type: ignore[no-untyped-def]
    """Distances (MiniLM) and contextual word vectors per distinct text, cached on disk."""
    from memsieve.embedders import minilm_graph
    from memsieve.embedders.local import LocalEmbedder
    from memsieve.gate import judge_align
    from memsieve.gate.guards import memory_text
    from memsieve.ops.calibrate import embed_all

    texts = list(dict.fromkeys([memory_text("", t) for it in items for t in (it.a, it.b)]))
    digest = hashlib.sha256("\n\x00".join(texts).encode()).hexdigest()[:16]
    embedder = LocalEmbedder()
    vecs = cached(
        cache_dir / f"memsieve-cv-vectors-{digest}.pkl",
        lambda: dict(zip(texts, embed_all(embedder, texts), strict=True)),
    )
    encoder = judge_align.MiniLMTokenEncoder(cache_size=1_000_000)
    words = cached(
        cache_dir / f"memsieve-cv-words-{encoder.name}-g{minilm_graph.GRAPH_VERSION}-{digest}.pkl",
        lambda: dict(zip(texts, encoder.encode(texts), strict=True)),
    )
    dist = []
    for it in items:
        va, vb = vecs[memory_text("", it.a)], vecs[memory_text("", it.b)]
        dist.append(float(1.0 - va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb))))
    return embedder.model, np.array(dist), words


class CachedEncoder:
    """The cached word vectors as a TokenEncoder."""

    name = "cached"

    def __init__(self, words: dict) -> None:  # type: ignore[type-arg]
        self.words = words

    def encode(self, texts):  # type: ignore[no-untyped-def]
        return [self.words[t] for t in texts]
