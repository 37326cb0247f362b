#!/usr/bin/env bash
# Install everything the tests need, lint, type-check, then run the whole suite
# (unit, integration with real embedded PostgreSQL + Redis, acceptance with real worker
# processes). Extra arguments go to pytest, e.g. scripts/test.sh -m "not slow".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh dev
# tests/unit/test_compose.py validates docker-compose.yml with Debian's docker-compose
# (`docker-compose config` needs no engine). About 20 s to install on a fresh machine.
if ! command -v docker-compose >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
  else
    echo "docker-compose is missing: apt-get install docker-compose (as root)" >&2
    exit 1
  fi
fi
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ruff check .
ruff format --check .
mypy
python -m pytest -q -p no:cacheprovider "$@"
