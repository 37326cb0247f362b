"""Backfill rate, end to end: `memsieve backfill` on N Markdown retros through real workers.

    python bench/backfill_rate.py [--files 2000] [--lessons 2] [--embedders hashing,local]
                                  [--concurrency 2]

For each embedder: fresh embedded PostgreSQL + Redis in a temp MEMSIEVE_HOME, one
`memsieve worker`, then `memsieve backfill DIR` timed from start to the last event in a
terminal state. Prints events/s and the backfill's summary.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.data.make_retros import generate  # noqa: E402


def _memsieve(*args: str) -> list[str]:
    return [sys.executable, "-m", "memsieve.cli.main", *args]


def run(embedder: str, retros: Path, concurrency: int) -> dict[str, object]:
    home = Path(tempfile.mkdtemp(prefix=f"memsieve-bench-{embedder}-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIEVE_")}
    env.update(
        MEMSIEVE_HOME=str(home),
        MEMSIEVE_EMBEDDER=embedder,
        MEMSIEVE_METRICS_PORT="0",
        MEMSIEVE_LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    subprocess.run(_memsieve("migrate"), env=env, cwd=ROOT, check=True, capture_output=True)
    log = open(home / "worker.log", "wb")
    worker = subprocess.Popen(
        _memsieve("worker", f"--concurrency={concurrency}"),
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        time.sleep(3)  # worker start-up is not part of the rate
        started = time.perf_counter()
        p = subprocess.run(
            _memsieve("backfill", str(retros), "--namespace", "bench", "--json", "--no-progress"),
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        elapsed = time.perf_counter() - started
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)
        log.close()
        subprocess.run(_memsieve("down"), env=env, cwd=ROOT, capture_output=True)
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    return {
        "embedder": embedder,
        "seconds": round(elapsed, 1),
        "events_per_s": round(summary["events"] / elapsed, 1),
        "summary": summary,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--lessons", type=int, default=2)
    ap.add_argument("--embedders", default="hashing,local")
    ap.add_argument("--concurrency", type=int, default=2)
    a = ap.parse_args()
    retros = Path(tempfile.mkdtemp(prefix="memsieve-retros-"))
    exp = generate(retros, a.files, a.lessons)
    print(f"{exp.files} Markdown retros, {exp.lessons} lessons; worker concurrency {a.concurrency}")
    for name in a.embedders.split(","):
        r = run(name, retros, a.concurrency)
        s = r["summary"]
        assert isinstance(s, dict)
        print(
            f"{name:8} {r['events_per_s']:>7} events/s  ({s['events']} events in {r['seconds']} s:"
            f" inserted {s['inserted']}, superseded {s['superseded']}, merged {s['merged']},"
            f" rejected {s['rejected']}, dead {s['dead']})",
            flush=True,
        )


if __name__ == "__main__":
    main()
