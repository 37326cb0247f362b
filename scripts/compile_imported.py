"""Write the bytecode of every module the service's processes import, and of nothing else.

scripts/install.sh installs the runtime with pip's --no-compile: pip would compile every
module of every package (most never imported). This imports what `memsieve` runs (the CLI,
the Celery worker with its pool and Redis transport, the stores, both embedders, the judges,
Flower) and compiles exactly the source files that are then loaded, and every module of
memsieve itself, whatever PYTHONDONTWRITEBYTECODE says (py_compile writes the files the
import system would).
"""

from __future__ import annotations

import importlib
import py_compile
import sys
from pathlib import Path

ENTRY_POINTS = (
    "memsieve.cli.main",
    "memsieve.cli.service",
    "memsieve.app",
    "memsieve.flow.pipeline",
    "memsieve.tasks.capture",
    "memsieve.tasks.flush",
    "memsieve.embedders.local",
    "memsieve.embedders.openai",
    "memsieve.gate.judge_classifier",
    "memsieve.history.api",
    "memsieve.ops.services",
    "celery.bin.celery",
    "celery.apps.worker",
    "celery.worker.consumer",
    "celery.concurrency.prefork",
    "kombu.transport.redis",
    "kombu.transport.pyamqp",
    "psycopg_pool",
    "pgvector.psycopg",
    "onnxruntime",
    "tokenizers",
    "openai",
    "flower.command",
)


def main() -> int:
    for name in ENTRY_POINTS:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - an optional part not installed: skip it
            print(f"compile_imported: {name} not imported ({type(exc).__name__})", file=sys.stderr)
    paths = {getattr(m, "__file__", None) for m in list(sys.modules.values())}
    # memsieve's own modules, all of them: the entry points above do not import what the
    # commands import when they run (`enqueue`'s cli.events, client and publisher, the
    # worker's consumer, the MCP server), and these files are few and small.
    import memsieve

    for root in memsieve.__path__:
        paths.update(str(p) for p in Path(root).rglob("*.py"))
    compiled = 0
    for path in sorted(p for p in paths if p and p.endswith(".py")):
        if py_compile.compile(path, quiet=1) is not None:
            compiled += 1
    print(f"compile_imported: {compiled} modules compiled", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
