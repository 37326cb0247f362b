#!/usr/bin/env bash
# Install everything the tests need, lint, type-check, then run the whole suite
# (unit, integration with real embedded PostgreSQL + Redis, acceptance with real worker
# processes). Extra arguments go to pytest, e.g. scripts/test.sh -m "not slow".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh dev
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ruff check .
ruff format --check .
mypy
python -m pytest -q -p no:cacheprovider "$@"
