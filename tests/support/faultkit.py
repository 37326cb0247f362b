"""Shared pieces of the fault scenarios (tests/acceptance/test_faults_*.py).

- `make_events`: facts x sends, each fact sent as identical copies, whitespace/case
  variants and light rewordings, that the hashing embedder places within the supersede
  threshold of each other (and distinct facts far apart); `check_facts` proves it with the
  real gate and guards, so a scenario never passes for the wrong reason.
- `send`: concurrent producers through the real broker, retrying a refused publish.
- `check_store`: the invariants after a run, as exact counts.
- `report`: one FIGURES line per scenario (stdout; appended to $MEMSIEVE_FIGURES_FILE).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from memsieve import constants
from memsieve.embedders.hashing import HashingEmbedder
from memsieve.gate import guards, thresholds
from memsieve.gate.decide import Candidate, Incoming, decide
from memsieve.schemas import memory
from memsieve.store.postgres import Store

from tests.support import db

_SYLLABLES = "ka lo mi ren tu sa vo bel dri po nex qua fi zor gla hu wen tra ob yel".split()


def _words(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(_SYLLABLES) for _ in range(3)))
    words = sorted(out)
    rng.shuffle(words)
    return words


def fact_pool(n: int) -> list[tuple[str, str]]:
    """n distinct (heading, content) lessons; words are made up so no two facts share them."""
    words = _words(7 * n)
    facts = []
    for i in range(n):
        w = words[7 * i : 7 * (i + 1)]
        content = (
            f"Always {w[0]} the {w[1]} {w[2]} before {w[3]} because {w[4]} {w[5]} {w[6]} otherwise"
        )
        facts.append((f"lesson {w[0]}", content))
    return facts


def variants(content: str) -> list[str]:
    """Ten sends of one fact: identical, whitespace and case variants, light rewordings."""
    words = content.split()
    return [
        content,
        content,
        content + " ",
        "  " + content,
        content.lower(),
        content.replace(" the ", " the  "),
        content + ".",
        "Note: " + content,
        content + " (learned the hard way)",
        " ".join(words[:-1]) + " " + words[-1].upper(),
    ]


def make_events(
    namespaces: list[str], facts_per_ns: int, sends: int = 10, pool: int = 40, seed: int = 7
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], int]]:
    """Shuffled events, and the expected number of live rows per (namespace, heading): 1.

    Namespaces draw overlapping facts from one pool, so the same text lives in several
    namespaces: a leak across namespaces would show as a merge into a foreign row.
    """
    facts = fact_pool(max(pool, facts_per_ns))
    events: list[dict[str, Any]] = []
    expected: dict[tuple[str, str], int] = {}
    for n_i, ns in enumerate(namespaces):
        for j in range(facts_per_ns):
            f_i = (3 * n_i + j) % len(facts)
            heading, content = facts[f_i]
            expected[(ns, heading)] = 1
            for v_i, text in enumerate(variants(content)[:sends]):
                events.append(
                    {
                        "event_id": f"{ns}-f{f_i}-v{v_i}",
                        "namespace": ns,
                        "kind": "pattern",
                        "heading": heading,
                        "content": text,
                    }
                )
    random.Random(seed).shuffle(events)
    return events, expected


def check_facts(n: int) -> None:
    """Every pair of variants of a fact would be superseded/merged; distinct facts never."""
    emb = HashingEmbedder()
    threshold = thresholds.threshold_for(emb.model, "pattern")
    rules = tuple(guards.default_guards())
    facts = fact_pool(n)

    def vec(heading: str, content: str) -> np.ndarray:
        return np.asarray(emb.embed([memory.memory_text(heading, content)])[0])

    heads = []
    for heading, content in facts:
        vs = variants(content)
        vecs = [vec(heading, v) for v in vs]
        heads.append(vecs[0])
        for (a, va), (b, vb) in itertools.permutations(zip(vs, vecs, strict=True), 2):
            d = 1.0 - float(va @ vb)
            cand = Candidate("m", "pattern", heading, b, memory.content_hash(heading, b), d)
            inc = Incoming("ns", "pattern", heading, a, memory.content_hash(heading, a))
            decision = decide(inc, [cand], threshold, rules)
            assert decision.action != "insert", (a, b, decision.reason)
    for va, vb in itertools.combinations(heads, 2):
        assert 1.0 - float(va @ vb) > threshold + 0.15


def send(
    app: Any, events: list[dict[str, Any]], producers: int = 8, per_message: int = 1
) -> list[str]:
    """Publish events from concurrent producers; returns the ids whose publish returned."""
    accepted: list[str] = []
    lock = threading.Lock()
    refusals = send.refusals = []  # type: ignore[attr-defined]

    def produce(chunk: list[dict[str, Any]]) -> None:
        for i in range(0, len(chunk), per_message):
            batch = chunk[i : i + per_message]
            payload: Any = batch if per_message > 1 else batch[0]
            for attempt in range(100):
                try:
                    app.send_task(constants.TASK_CAPTURE, args=[payload], queue=constants.QUEUE)
                    break
                except Exception as exc:  # noqa: BLE001 - broker down: the producer retries
                    with lock:
                        refusals.append(f"{type(exc).__name__}: {exc}")
                    time.sleep(min(1.0, 0.05 * 2**attempt))
            else:
                continue
            with lock:
                accepted.extend(e["event_id"] for e in batch)

    threads = [
        threading.Thread(target=produce, args=(events[i::producers],)) for i in range(producers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return accepted


def terminal_count(store: Store) -> int:
    return db.query(store, "SELECT count(*)::int AS n FROM events WHERE status <> 'pending'")[0][
        "n"
    ]


def check_store(
    store: Store, expected: dict[tuple[str, str], int], n_events: int
) -> dict[str, int]:
    """Assert the invariants with exact counts; returns the figures."""
    statuses = db.query(
        store, "SELECT status, count(*)::int AS n FROM events GROUP BY 1 ORDER BY 1"
    )
    assert statuses == [{"status": "written", "n": n_events}], statuses
    live = db.query(
        store,
        "SELECT namespace, heading, count(*)::int AS n FROM memories WHERE deleted_at IS NULL"
        " GROUP BY 1, 2",
    )
    got = {(r["namespace"], r["heading"]): r["n"] for r in live}
    duplicates = sum(n - 1 for n in got.values() if n > 1)
    assert got == expected, {k: v for k, v in got.items() if expected.get(k) != v}
    rows = db.query(
        store,
        "SELECT id::text, supersedes::text, namespace, heading, deleted_at, decision FROM memories",
    )
    by_id = {r["id"]: r for r in rows}
    # Linear chains: each row superseded at most once, only dead rows superseded, no cycle,
    # every chain inside one namespace and one fact.
    superseded = [r["supersedes"] for r in rows if r["supersedes"]]
    assert len(superseded) == len(set(superseded)), "a chain forks"
    assert sum(1 for r in rows if r["deleted_at"] is not None) == len(superseded)
    for r in rows:
        seen, cur = set(), r
        while cur["supersedes"]:
            assert cur["id"] not in seen, "a chain has a cycle"
            seen.add(cur["id"])
            prev = by_id[cur["supersedes"]]
            assert prev["deleted_at"] is not None
            assert (prev["namespace"], prev["heading"]) == (cur["namespace"], cur["heading"])
            cur = prev
    # No row of one namespace was ever a candidate of a decision in another.
    foreign = 0
    for r in rows:
        for c in (r["decision"] or {}).get("candidates", []):
            foreign += by_id[c["memory_id"]]["namespace"] != r["namespace"]
    bad = db.query(
        store,
        "SELECT count(*)::int AS n FROM events e JOIN memories m ON m.id = e.memory_id"
        " WHERE m.namespace <> e.namespace OR m.heading <> e.heading",
    )[0]["n"]
    assert foreign == 0 and bad == 0
    decisions = Counter(
        r["decision"]
        for r in db.query(store, "SELECT decision FROM events WHERE status = 'written'")
    )
    return {
        "events": n_events,
        "live_rows": sum(got.values()),
        "duplicates": duplicates,
        "rows": len(rows),
        "inserted": decisions["inserted"],
        "superseded": decisions["superseded"],
        "merged": decisions["merged"],
    }


def report(scenario: str, **figures: Any) -> None:
    line = json.dumps({"scenario": scenario, **figures}, default=str)
    print("FIGURES " + line)
    path = os.environ.get("MEMSIEVE_FIGURES_FILE")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


class LogTail:
    """Follows one worker's log file; waits for a line matching a pattern."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def skip_to_end(self) -> None:
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str] | None:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.path.exists():
                with self.path.open("rb") as f:
                    f.seek(self.offset)
                    data = f.read()
                # Only consume complete lines.
                for raw in data.splitlines(keepends=True):
                    if not raw.endswith(b"\n"):
                        break
                    self.offset += len(raw)
                    m = rx.search(raw.decode(errors="replace"))
                    if m:
                        return m
            time.sleep(0.02)
        return None


def signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """Signal a worker's whole process group (main process and its pool children)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def local_tcp_ports(pid: int) -> set[int]:
    """Local TCP ports of a process's sockets (Linux /proc), to find its Postgres backends."""
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if parts[9] in inodes:
                ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return ports


def holds_advisory_lock(store: Store, pid: int) -> bool:
    """Whether process `pid` is inside a transaction holding a namespace advisory lock."""
    ports = local_tcp_ports(pid)
    rows = db.query(
        store,
        "SELECT a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted",
    )
    return any(r["client_port"] in ports for r in rows)
