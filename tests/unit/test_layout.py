"""The shape of the package, read from the source with `ast` (nothing is imported).

Every module under worker/, tasks/ and schemas/ is mapped to its installed name
(memsieve.*, memsieve.tasks.*, memsieve.schemas.*) and its imports of memsieve modules
become the edges of one graph; imports inside functions and under `if TYPE_CHECKING:`
count too (a lazy import hides a circle from the interpreter, not from a reader). The
graph must have:

- no circle;
- no arrow into memsieve.tasks from outside it (tasks/ is the Celery edge: it calls
  worker/, never the other way round);
- a pure core: memsieve.gate, memsieve.capture and memsieve.schemas reach no database,
  broker, queue or network client (psycopg, redis, celery, kombu, openai), directly or
  through another memsieve module;
- no production module over MAX_LINES lines unless LONG_MODULES names it with a reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"worker": "memsieve", "tasks": "memsieve.tasks", "schemas": "memsieve.schemas"}
PURE_CORE = ("memsieve.gate", "memsieve.capture", "memsieve.schemas")
IMPURE = ("psycopg", "psycopg_pool", "pgvector", "redis", "celery", "kombu", "openai")
MAX_LINES = 300
# module -> why it is longer than MAX_LINES. Add a module here only with a reason a
# reader would accept; splitting is the default answer.
# Entries marked "to split" are debts, each owned by the helper rewriting the module this
# session (issue 12 items 2 and 3, issue 15); the others are one table or one algorithm.
LONG_MODULES: dict[str, str] = {
    "memsieve.settings": "every setting's help line and its validation, in one place by design",
    "memsieve.capture.patterns": "one table of secret formats with their validators",
    "memsieve.capture.secrets": "one detector: the layers over a string and their merge",
    "memsieve.capture.policy": "the policy's config parser and its verdict, one contract",
    "memsieve.gate.text": "one tokeniser and its term classes, cached together",
    "memsieve.judge_llm": "one chat judge: batching, cache, budget, retries, answer parsing",
    "memsieve.history.explain": "one report: the event, its decision record and the rows it touched",
    "memsieve.gate.decide": "the gate's pair and verdict types with the one decision over them",
    "memsieve.gate.batch": "one pure function over a batch: filters, judge call, decisions in order",
}


@cache
def modules() -> dict[str, Path]:
    """Installed module name -> source file."""
    found: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT / folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            found[".".join((package, *rel))] = path
    return found


def _imports(name: str, path: Path) -> Iterator[str]:
    """Absolute names this module imports (relative imports resolved)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # `from memsieve.gate import decide` imports the module memsieve.gate.decide
            # (its package runs first, as for any submodule: not an edge of its own);
            # `from memsieve.gate.decide import decide` imports memsieve.gate.decide.
            subs = [f"{module}.{alias.name}" for alias in node.names]
            inner = [sub for sub in subs if sub in modules()]
            yield from inner
            if len(inner) < len(subs):
                yield module


@cache
def graph() -> dict[str, set[str]]:
    """memsieve module -> the memsieve modules it imports (external names under 'ext:')."""
    mods = modules()
    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        out: set[str] = set()
        for imported in _imports(name, path):
            if imported in mods:
                if imported != name:
                    out.add(imported)
            elif imported.split(".")[0] != "memsieve":
                out.add("ext:" + imported.split(".")[0])
        edges[name] = out
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(n for n in edges[root] if n in edges)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(n for n in edges[child] if n in edges))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _reach(start: str, edges: dict[str, set[str]]) -> dict[str, str]:
    """Everything `start` imports, directly or not: name -> the module that imports it."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo:
        node = todo.pop()
        for child in edges.get(node, ()):
            if child not in seen:
                seen[child] = node
                todo.append(child)
    return seen


def test_the_graph_sees_the_package() -> None:
    """A sanity check on the parser, so the rules below cannot pass on an empty graph."""
    edges = graph()
    assert {"memsieve.gate.decide", "memsieve.store.postgres", "memsieve.tasks"} <= set(edges)
    # Transitive: flush -> flow.runtime -> flow.pipeline -> store.postgres.
    assert "memsieve.store.postgres" in _reach("memsieve.tasks.flush", edges)
    assert "ext:psycopg" in edges["memsieve.store.postgres"]


def test_cycle_finder_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(edges) == [["a", "b", "c"]]


def test_no_import_circle() -> None:
    assert _cycles(graph()) == []


def test_nothing_outside_tasks_imports_tasks() -> None:
    wrong = {
        name: sorted(n for n in out if n.startswith("memsieve.tasks"))
        for name, out in graph().items()
        if not name.startswith("memsieve.tasks")
    }
    assert {name: out for name, out in wrong.items() if out} == {}


def test_pure_core_reaches_no_client_library() -> None:
    edges = graph()
    wrong = {}
    for name in edges:
        if not name.startswith(PURE_CORE):
            continue
        reached = _reach(name, edges)
        for lib in IMPURE:
            if "ext:" + lib in reached:
                # The chain from the core module to the library, for the message.
                chain = ["ext:" + lib]
                while chain[-1] != name:
                    chain.append(reached[chain[-1]])
                wrong[name] = " <- ".join(chain)
                break
    assert wrong == {}


def test_no_long_module_without_a_reason() -> None:
    long = {
        name: len(path.read_text().splitlines())
        for name, path in modules().items()
        if len(path.read_text().splitlines()) > MAX_LINES
    }
    assert {name: n for name, n in long.items() if name not in LONG_MODULES} == {}
    assert set(LONG_MODULES) - set(long) == set(), "LONG_MODULES names a module now short"


def test_test_tiers_share_helpers_only_through_tests_support() -> None:
    """A tier's tests import helpers from tests/support/ (or data generators from
    tests/data/), never from another tier or from a conftest.py."""
    tests = ROOT / "tests"
    wrong = {}
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(tests)
        tier = rel.parts[0] if len(rel.parts) > 1 else ""
        for imported in _imports("tests." + ".".join(rel.with_suffix("").parts), path):
            parts = imported.split(".")
            if parts[0] != "tests" or len(parts) < 2:
                continue
            if parts[1] in ("support", "data") or parts[1] == tier:
                if parts[-1] != "conftest":
                    continue
            wrong.setdefault(rel.as_posix(), []).append(imported)
    assert wrong == {}
