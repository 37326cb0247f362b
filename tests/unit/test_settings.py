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
            "MEMSIEVE_THRESHOLD must be a cosine distance in (0, 2), got 3.0",
        ),
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
