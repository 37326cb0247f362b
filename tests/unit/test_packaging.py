"""The installed distribution puts one top-level name, `memsieve`, into an environment.

The repository keeps the folders worker/, tasks/ and schemas/; pyproject's `package-dir`
maps them to memsieve, memsieve.tasks and memsieve.schemas. This test builds the wheel
from a copy of the sources (the worktree stays clean), installs it without dependencies
into a fresh venv, and checks what landed there: one package, every sub-package and data
file of the folders, the `memsieve` command, and no `worker`, `tasks` or `schemas`.
About 5 s.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"worker": "memsieve", "tasks": "memsieve.tasks", "schemas": "memsieve.schemas"}
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def _source_packages() -> set[str]:
    """Every folder with an __init__.py under worker/, tasks/, schemas/, as its installed name."""
    found = set()
    for folder, name in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    return found


def _source_files() -> set[str]:
    """Every file of the three folders, as its path inside the installed package."""
    files = set()
    for folder, name in FOLDERS.items():
        base = Path(*name.split("."))
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.add((base / path.relative_to(ROOT / folder)).as_posix())
    return files


def test_pyproject_lists_every_package_folder() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {v: k for k, v in FOLDERS.items()}
    listed = set(config["packages"])
    found = _source_packages()
    assert found - listed == set(), "sub-packages missing from pyproject's `packages`"
    assert listed - found == set(), "pyproject lists packages that have no folder"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, src / folder, ignore=IGNORED)
    out = tmp_path_factory.mktemp("dist")
    # The build backend itself, without pip's isolated build environment (no network).
    code = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    yield out / done.stdout.strip().splitlines()[-1]


def test_wheel_holds_only_memsieve(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        top_level = {n.split("/")[0] for n in names} - {dist_info}
        assert top_level == {"memsieve"}
        assert zf.read(f"{dist_info}/top_level.txt").decode().split() == ["memsieve"]
        assert (
            "memsieve = memsieve.cli.main:main" in zf.read(f"{dist_info}/entry_points.txt").decode()
        )
    # Every module and data file of the folders is in the wheel (package-data included).
    assert _source_files() - set(names) == set()


def test_clean_venv_imports_only_memsieve(wheel: Path, tmp_path: Path) -> None:
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [python, "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            text=True,
        ).strip()
    )
    before = set(p.name for p in site.iterdir())
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    added = {p.name for p in site.iterdir()} - before
    assert {n for n in added if not n.endswith(".dist-info")} == {"memsieve"}
    assert (env / "bin" / "memsieve").exists()
    # Isolated (-I: no current folder, no PYTHON* variables), from a folder that is not the
    # repository: the installed names are found, the folder names are not.
    probe = (
        "import importlib.util as u, json, memsieve;"
        "names = ['memsieve', 'memsieve.tasks', 'memsieve.schemas', 'memsieve.cli.main',"
        " 'memsieve.store', 'worker', 'tasks', 'schemas'];"
        "print(json.dumps({n: u.find_spec(n) is not None for n in names} | {'file': memsieve.__file__}))"
    )
    out = subprocess.run(
        [python, "-I", "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    found = json.loads(out.stdout)
    assert Path(found.pop("file")).is_relative_to(site)
    assert found == {
        "memsieve": True,
        "memsieve.tasks": True,
        "memsieve.schemas": True,
        "memsieve.cli.main": True,
        "memsieve.store": True,
        "worker": False,
        "tasks": False,
        "schemas": False,
    }
