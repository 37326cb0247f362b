"""Generate a folder of Markdown retros for backfill tests and benchmarks.

    python tests/data/make_retros.py OUT_DIR [--files 2000] [--lessons 2] [--seed 7]

Each file is one retro: a title (no body, so not a lesson) and `--lessons` lesson sections.
Deterministic for a seed. Besides distinct lessons it plants, at fixed positions:
exact repeats of an earlier lesson (the gate merges them), session trivia (the policy
rejects it) and a lesson holding a credential (rejected as a secret). `expected()` returns
the counts a test can assert.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass
from pathlib import Path

SYSTEMS = [
    "billing-api",
    "search-indexer",
    "auth-gateway",
    "etl-nightly",
    "mobile-sync",
    "payments-ledger",
    "notify-service",
    "report-builder",
    "media-transcoder",
    "geo-lookup",
]
ACTIONS = [
    "pin the client library to a minor version",
    "run the migration before the deploy",
    "set an explicit timeout on every outbound call",
    "warm the cache after a restart",
    "retry with jitter instead of a fixed delay",
    "keep the feature flag until the backfill ends",
    "log the request id at every hop",
    "read replicas lag, so read your own writes from the primary",
    "rotate the signing key in two phases",
    "cap the batch size at what one transaction can hold",
]
CAUSES = [
    "a silent upstream schema change",
    "an unbounded retry loop",
    "clock skew between hosts",
    "a connection pool sized below the worker count",
    "a cache key that ignored the tenant",
    "an index missing on the foreign key",
    "a race between two cron jobs",
    "a default timeout of zero",
    "a stale DNS entry",
    "a full disk on the log volume",
]

EVERY_REPEAT = 50  # every 50th lesson repeats an earlier one word for word
EVERY_TRIVIA = 97  # every 97th lesson is session trivia
EVERY_SECRET = 199  # every 199th lesson holds a credential


@dataclass
class Expected:
    files: int
    lessons: int
    repeats: int
    trivia: int
    secrets: int


def _lesson(rng: random.Random, n: int) -> tuple[str, str]:
    system, action, cause = rng.choice(SYSTEMS), rng.choice(ACTIONS), rng.choice(CAUSES)
    ticket = f"OPS-{1000 + n}"
    heading = f"{system}: {action} ({ticket})"
    content = (
        f"During incident {ticket} on {system} the root cause was {cause}. "
        f"Lesson: always {action}; we lost {rng.randint(5, 300)} minutes because we did not. "
        f"Next time check the {rng.choice(['dashboards', 'runbook', 'alerts', 'deploy log'])} first."
    )
    return heading, content


def generate(out: Path, files: int = 2000, lessons: int = 2, seed: int = 7) -> Expected:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    made: list[tuple[str, str]] = []
    exp = Expected(files, 0, 0, 0, 0)
    n = 0
    for f in range(files):
        parts = [f"# Retro {f:05d}\n"]
        for _ in range(lessons):
            n += 1
            if n % EVERY_SECRET == 0:
                heading, content = (
                    f"deploy credentials {n}",
                    (
                        "Lesson: never paste keys in chat; the key was "
                        "AKIAQX4BZ7KD2PLM3XYZ with secret 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"
                    ),
                )
                exp.secrets += 1
            elif n % EVERY_TRIVIA == 0:
                heading, content = (
                    f"session {n}",
                    (
                        f"2024-05-01 14:{n % 60:02d}:00 INFO ran the test suite\n"
                        f"2024-05-01 14:{n % 60:02d}:30 INFO opened a pull request"
                    ),
                )
                exp.trivia += 1
            elif n % EVERY_REPEAT == 0 and made:
                # Never from this file: the same section twice in one file is one event.
                heading, content = made[rng.randrange(max(1, len(made) - lessons))]
                exp.repeats += 1
            else:
                heading, content = _lesson(rng, n)
                made.append((heading, content))
            parts.append(f"## {heading}\n\n{content}\n")
            exp.lessons += 1
        (out / f"retro-{f:05d}.md").write_text("\n".join(parts), encoding="utf-8")
    return exp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--lessons", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    print(generate(a.out, a.files, a.lessons, a.seed))


if __name__ == "__main__":
    main()
