"""Settings: validated at start-up, a bad value fails loudly with the variable's name."""

from __future__ import annotations

import pytest
from memsieve.errors import ConfigError
from memsieve.settings import Settings, redact_url


def test_defaults_pick_local_without_a_key_and_openai_with_one() -> None:
    assert Settings.from_env({}).embedder == "local"
    assert Settings.from_env({"OPENAI_API_KEY": "sk-x"}).embedder == "openai"
    assert (
        Settings.from_env({"OPENAI_API_KEY": "sk-x", "MEMSIEVE_EMBEDDER": "hashing"}).embedder
        == "hashing"
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"MEMSIEVE_EMBEDDER": "word2vec"},
            "MEMSIEVE_EMBEDDER must be openai, local or hashing, got 'word2vec'",
        ),
        ({"MEMSIEVE_EMBEDDER": "openai"}, "MEMSIEVE_EMBEDDER=openai needs OPENAI_API_KEY"),
        (
            {"MEMSIEVE_DATABASE_URL": "mysql://x"},
            "MEMSIEVE_DATABASE_URL must be a postgresql/postgres URL, got 'mysql://x'",
        ),
        ({"MEMSIEVE_BATCH_SIZE": "lots"}, "MEMSIEVE_BATCH_SIZE must be an integer, got 'lots'"),
        ({"MEMSIEVE_LOCK_TTL": "0"}, "MEMSIEVE_LOCK_TTL must be >= 1, got 0"),
        (
            {"MEMSIEVE_THRESHOLD": "3"},
            "MEMSIEVE_THRESHOLD must be a cosine distance in [0, 2], got '3'",
        ),
        (
            {"MEMSIEVE_THRESHOLD": "nan"},
            "MEMSIEVE_THRESHOLD must be a cosine distance in [0, 2], got 'nan'",
        ),
        (
            {"MEMSIEVE_THRESHOLD_FAILURE": "-0.1"},
            "MEMSIEVE_THRESHOLD_FAILURE must be a cosine distance in [0, 2], got '-0.1'",
        ),
        (
            {"MEMSIEVE_THRESHOLD_LESSON": "0.3"},
            "MEMSIEVE_THRESHOLD_LESSON: unknown kind 'lesson' "
            "(one of RETRO, CORRECTION, FAILURE, PATTERN)",
        ),
        # The capture policy's variables are validated with the rest, at start-up.
        (
            {"MEMSIEVE_POLICY_MIN_CONTENT": "short"},
            "MEMSIEVE_POLICY_MIN_CONTENT must be an integer",
        ),
        (
            {"MEMSIEVE_POLICY_ALLOWED_KINDS": "retro,gossip"},
            "env.allowed_kinds: unknown kind 'gossip'",
        ),
        (
            {"MEMSIEVE_POLICY_FILE": "/nonexistent/policy.yaml"},
            "policy file /nonexistent/policy.yaml: No such file or directory",
        ),
        ({"MEMSIEVE_LOCAL_THREADS": "-1"}, "MEMSIEVE_LOCAL_THREADS must be >= 0, got -1"),
        ({"MEMSIEVE_STARTUP_WAIT": "soon"}, "MEMSIEVE_STARTUP_WAIT must be an integer, got 'soon'"),
        (
            {"MEMSIEVE_FLOWER_BASIC_AUTH": "nocolon"},
            "MEMSIEVE_FLOWER_BASIC_AUTH must be user:password, both non-empty",
        ),
        # Empty credentials would open Flower to anyone sending empty basic auth.
        (
            {"MEMSIEVE_FLOWER_BASIC_AUTH": ":"},
            "MEMSIEVE_FLOWER_BASIC_AUTH must be user:password, both non-empty",
        ),
        (
            {"MEMSIEVE_FLOWER_BASIC_AUTH": "user:"},
            "MEMSIEVE_FLOWER_BASIC_AUTH must be user:password, both non-empty",
        ),
        (
            {"MEMSIEVE_FLOWER_BASIC_AUTH": ":pw"},
            "MEMSIEVE_FLOWER_BASIC_AUTH must be user:password, both non-empty",
        ),
        (
            {"MEMSIEVE_FLOWER_BASIC_AUTH": "ops:pw, :"},
            "MEMSIEVE_FLOWER_BASIC_AUTH must be user:password, both non-empty",
        ),
        (
            {"MEMSIEVE_METRICS_HASH_NAMESPACES": "maybe"},
            "MEMSIEVE_METRICS_HASH_NAMESPACES must be auto, true or false, got 'maybe'",
        ),
    ],
)
def test_bad_settings_fail_loudly(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        Settings.from_env(env)
    assert str(exc.value) == message


def test_concurrency_defaults_to_more_processes_for_a_remote_embedder() -> None:
    # A local model computes in each process: one per core here. A remote embedder's
    # processes mostly wait for its answers: twice as many (issue 16's headline).
    assert Settings.from_env({}).concurrency == 2
    assert Settings.from_env({"MEMSIEVE_EMBEDDER": "hashing"}).concurrency == 2
    assert Settings.from_env({"OPENAI_API_KEY": "sk-x"}).concurrency == 4
    assert (
        Settings.from_env({"MEMSIEVE_EMBEDDER": "openai", "OPENAI_API_KEY": "k"}).concurrency == 4
    )
    told = {"OPENAI_API_KEY": "sk-x", "MEMSIEVE_CONCURRENCY": "3"}
    assert Settings.from_env(told).concurrency == 3
    assert (
        Settings.from_env({"OPENAI_API_KEY": "sk-x", "MEMSIEVE_CONCURRENCY": ""}).concurrency == 4
    )


def test_passwords_never_appear_in_errors_or_repr() -> None:
    with pytest.raises(ConfigError) as exc:
        Settings.from_env({"MEMSIEVE_DATABASE_URL": "mysql://u:hunter2@h/db"})
    assert "hunter2" not in str(exc.value)
    s = Settings.from_env(
        {"OPENAI_API_KEY": "sk-secret-value", "MEMSIEVE_FLOWER_BASIC_AUTH": "a:pw"}
    )
    assert "sk-secret-value" not in repr(s) and "a:pw" not in repr(s)
    assert redact_url("redis://:pw@h:6379/0") == "redis://:***@h:6379/0"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MEMSIEVE_EMBED_RPM": "-1"}, "MEMSIEVE_EMBED_RPM must be >= 0, got -1"),
        ({"MEMSIEVE_GATE_SEARCH": "hnsw"}, "MEMSIEVE_GATE_SEARCH must be memory or sql"),
        ({"MEMSIEVE_GATE_CACHE_MB": "0"}, "MEMSIEVE_GATE_CACHE_MB must be >= 1, got 0"),
    ],
)
def test_settings_read_elsewhere_are_still_validated_at_start_up(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        Settings.from_env(env)
    assert str(exc.value) == message


def test_metrics_namespace_hashing_defaults_to_on_beyond_localhost() -> None:
    assert not Settings.from_env({}).metrics_hash_namespaces
    assert Settings.from_env({"MEMSIEVE_METRICS_ADDRESS": "0.0.0.0"}).metrics_hash_namespaces
    off = {"MEMSIEVE_METRICS_ADDRESS": "0.0.0.0", "MEMSIEVE_METRICS_HASH_NAMESPACES": "false"}
    assert not Settings.from_env(off).metrics_hash_namespaces
    assert Settings.from_env({"MEMSIEVE_METRICS_HASH_NAMESPACES": "true"}).metrics_hash_namespaces


def test_hashed_namespace_labels_are_keyed_and_stable() -> None:
    from memsieve import metrics

    a = metrics.namespace_label("acme-corp", b"k" * 32)
    assert a == metrics.namespace_label("acme-corp", b"k" * 32) and a.startswith("ns-")
    assert "acme" not in a and a != metrics.namespace_label("acme-corp", b"j" * 32)
    assert metrics.namespace_label("acme-corp", None) == "acme-corp"


# Modules that touch os.environ for a reason other than reading a memsieve setting.
ENVIRON_ALLOWED = {
    # prometheus_client's multiprocess mode is configured by this variable, in the
    # process and its forked children.
    "worker/metrics.py": "PROMETHEUS_MULTIPROC_DIR for prometheus_client",
    # Sets (setdefault) the tokenizers library's own variable before it loads.
    "worker/embedders/local.py": "TOKENIZERS_PARALLELISM for tokenizers",
    # Builds the environment of the processes it starts (worker, Flower), from settings.
    "worker/cli/supervise.py": "environment of child processes",
    # The worker command hands the same environment to Celery's pool children.
    "worker/cli/service.py": "environment of the worker's pool children",
}


def test_no_environment_read_outside_settings() -> None:
    """Every MEMSIEVE_* variable is read once, by Settings.from_env; the rest get settings."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    readers = {}
    for folder in ("worker", "tasks", "schemas"):
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel == "worker/settings.py" or rel in ENVIRON_ALLOWED:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "os"
                    and node.attr in ("environ", "getenv", "environb", "putenv")
                ) or (isinstance(node, ast.ImportFrom) and node.module == "os"):
                    readers.setdefault(rel, []).append(node.lineno)
    assert readers == {}


def test_every_memsieve_variable_is_listed_in_help() -> None:
    """A MEMSIEVE_* name in the package's code is a setting `memsieve --help` lists."""
    import ast
    import re
    from pathlib import Path

    from memsieve.settings import SETTINGS_HELP

    root = Path(__file__).resolve().parents[2]
    listed = set(SETTINGS_HELP)
    patterns = [re.escape(n).replace(re.escape("<KIND>"), "[A-Z]+") for n in listed]
    listed_re = re.compile("|".join(f"(?:{p})" for p in patterns))
    name_re = re.compile(r"MEMSIEVE_[A-Z0-9_]*[A-Z0-9]")
    unlisted = {}
    for folder in ("worker", "tasks", "schemas"):
        for path in sorted((root / folder).rglob("*.py")):
            # String constants that are a variable's name: how code reads a variable.
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    name = node.value
                    if name_re.fullmatch(name) and not listed_re.fullmatch(name):
                        unlisted.setdefault(name, path.relative_to(root).as_posix())
    assert unlisted == {}


def test_a_bad_setting_stops_a_command_at_start_up_with_its_name() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIEVE_")}
    env.update(
        MEMSIEVE_THRESHOLD_FAILURE="3",
        MEMSIEVE_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none",
        MEMSIEVE_REDIS_URL="redis://127.0.0.1:1",
    )
    done = subprocess.run(
        [sys.executable, "-m", "memsieve.cli.main", "worker", "--drain"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "MEMSIEVE_THRESHOLD_FAILURE must be a cosine distance in [0, 2], got '3'" in (
        done.stderr
    )


def test_on_conflict_defaults_to_keep_and_may_differ_per_namespace() -> None:
    s = Settings.from_env({})
    assert (s.on_conflict, s.on_conflict_for("any")) == ("keep", "keep")
    s = Settings.from_env({"MEMSIEVE_ON_CONFLICT": "newest"})
    assert s.on_conflict_for("any") == "newest"
    s = Settings.from_env({"MEMSIEVE_ON_CONFLICT": "keep, team-a=newest"})
    assert [s.on_conflict_for(ns) for ns in ("team-a", "team-b")] == ["newest", "keep"]


@pytest.mark.parametrize("raw", ["latest", "keep,team-a=oldest", "=newest", "keep,newest=x"])
def test_bad_on_conflict_fails_at_start_up(raw: str) -> None:
    with pytest.raises(ConfigError, match="MEMSIEVE_ON_CONFLICT must be keep or newest"):
        Settings.from_env({"MEMSIEVE_ON_CONFLICT": raw})


def test_update_band_is_off_by_default_and_reaches_the_classifier_judge() -> None:
    from memsieve.gate.decide import update_band
    from memsieve.gate.judge_align import LexicalTokenEncoder
    from memsieve.gate.judge_classifier import ClassifierJudge

    assert Settings.from_env({}).update_band == 0.0
    s = Settings.from_env({"MEMSIEVE_UPDATE_BAND": "0.15"})
    assert s.update_band == 0.15
    # In the embedder's own distances: MiniLM's band over the ratio of the thresholds.
    assert update_band(ClassifierJudge(LexicalTokenEncoder(), update_band=0.15)) == 0.15
    scaled = ClassifierJudge(LexicalTokenEncoder(), update_band=0.15, distance_scale=5.0)
    assert update_band(scaled) == pytest.approx(0.03)
    with pytest.raises(ConfigError, match="MEMSIEVE_UPDATE_BAND"):
        Settings.from_env({"MEMSIEVE_UPDATE_BAND": "wide"})
