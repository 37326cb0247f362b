"""`memsieve worker` for the benchmarks: python -m bench.worker [ARGS...] (from the repo root).

Installs the simulated-latency embedder when MEMSIEVE_FAKE_EMBED_LATENCY_MS is set
(bench/latency_embedder.py), then runs `memsieve worker ARGS...` in this process.
"""

from __future__ import annotations

import sys

from memsieve.cli.main import main

from bench import latency_embedder

if __name__ == "__main__":
    latency_embedder.install()
    sys.exit(main(["worker", *sys.argv[1:]]))
