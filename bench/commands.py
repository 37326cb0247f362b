"""Wall and CPU time of the `memsieve` commands a user types, against running services.

Run from the repo root (starts its own embedded Postgres and Redis; no worker runs, so
`enqueue` measures the command alone):

    . .venv/bin/activate && python -m bench.commands [--runs 5] [--file-events 5000]

Each command runs --runs times as its own process (the `memsieve` console script of this
venv), with the local embedder for `write` and `recall`; prints the median wall time and
the median CPU time (user + sys of the child) per command, beside the targets of issue 16.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import harness

TARGETS = {"write": 1.5, "recall": 1.5}
DEFAULT_TARGET = 0.5


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, cpu s, stdout) of one run; fails loudly if the command fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=harness.ROOT, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[1:3])} failed ({proc.returncode}): {proc.stderr[-800:]}")
    return wall, cpu, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--file-events", type=int, default=5000)
    ap.add_argument("--only", help="comma-separated command names")
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "memsieve")
    event = ["--namespace", "bench", "--kind", "retro", "--heading", "Deploy order"]
    with harness.Services() as svc:
        env = svc.env(svc.fresh_db(), MEMSIEVE_EMBEDDER="local")
        env.pop("MEMSIEVE_HASHING_DIMS", None)
        # A memory and its event to read back.
        _, _, out = timed(
            [exe, "write", *event, "--content", "Run the migrations before the API deploy."], env
        )
        written = json.loads(out)
        memory, event_id = written["memory_id"], written["event_id"]
        fd, path = tempfile.mkstemp(prefix="memsieve-bench-cmd-", suffix=".jsonl")
        with os.fdopen(fd, "w") as f:
            for e in harness.make_events(args.file_events, 20, prefix="cmd"):
                f.write(json.dumps(e) + "\n")
        commands: dict[str, list[str]] = {
            "--help": ["--help"],
            "enqueue": ["enqueue", *event, "--content", "Tag releases after the deploy."],
            f"enqueue --file ({args.file_events} events)": ["enqueue", "--file", path],
            "events": ["events", "--namespace", "bench"],
            "stats": ["stats"],
            "history": ["history", memory],
            "explain": ["explain", event_id, "--namespace", "bench"],
            "write": ["write", *event, "--content", "Deploys need a green build first."],
            "recall": ["recall", "bench", "deploy order"],
        }
        if args.only:
            keep = args.only.split(",")
            commands = {k: v for k, v in commands.items() if k.split()[0] in keep}
        print(f"{args.runs} runs per command, medians; load average {os.getloadavg()[0]:.1f}")
        print("| command | wall (s) | runs | CPU (s) | target (wall) |")
        print("| --- | --- | --- | --- | --- |")
        for name, argv in commands.items():
            walls, cpus = [], []
            for n in range(args.runs):
                if name == "write":  # a new event each time (not a merge of the last one)
                    argv = [*argv[:-1], f"Deploys need a green build first ({n})."]
                wall, cpu, _ = timed([exe, *argv], env)
                walls.append(wall)
                cpus.append(cpu)
            target = TARGETS.get(
                name, DEFAULT_TARGET if not name.startswith("enqueue --") else None
            )
            runs = ", ".join(f"{w:.2f}" for w in walls)
            print(
                f"| `{name}` | {harness.median(walls):.2f} | {runs} | {harness.median(cpus):.2f} "
                f"| {f'< {target:g} s' if target else ''} |",
                flush=True,
            )
        Path(path).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
