"""docker-compose.yml, checked without a Docker engine: parse it and hold it to the code.

When a setting is added to worker/settings.py, this test asks for a decision: set it in
the compose file, or list it in DEFAULT_IS_FINE with the reason it needs no value there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from memsieve.ops.services import REDIS_APP_RULES
from memsieve.settings import SETTINGS_HELP, Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
REDIS_START = ROOT / "docker" / "redis-start.sh"
PG_INIT = ROOT / "docker" / "postgres-init.sh"
# Every credential the stack needs, each required (compose refuses to start without it).
CREDENTIALS = {
    "POSTGRES_PASSWORD": "pg-super-1",
    "MEMSIEVE_DB_PASSWORD": "pg-app-2",
    "REDIS_PASSWORD": "redis-app-3",
    "REDIS_ADMIN_PASSWORD": "redis-admin-4",
    "MEMSIEVE_FLOWER_BASIC_AUTH": "ops:flower-5",
}

# Settings the compose stack leaves at their defaults, and why that is right there.
DEFAULT_IS_FINE = {
    "MEMSIEVE_YIELD_TO_LIVE": "on by default; false only to measure without it",
    "MEMSIEVE_EMBED_AHEAD": "on by default; false only to measure without it",
    "MEMSIEVE_JUDGE": "classifier, the measured default",
    "MEMSIEVE_UPDATE_BAND": "off: it halves the headline throughput (docs/dedupe-quality.md)",
    "MEMSIEVE_JUDGE_SHARE_TTL_S": "60 s of shared token vectors: bounded Redis memory",
    "MEMSIEVE_JUDGE_LLM_MODEL": "the LLM judge is off unless configured",
    "MEMSIEVE_JUDGE_LLM_BASE_URL": "only with the LLM judge",
    "MEMSIEVE_JUDGE_LLM_API_KEY": "only with the LLM judge",
    "MEMSIEVE_JUDGE_LLM_RPM": "only with the LLM judge",
    "MEMSIEVE_JUDGE_LLM_TPM": "only with the LLM judge",
    "MEMSIEVE_OPENAI_DIMENSIONS": "1536 matches text-embedding-3-small",
    "MEMSIEVE_HASHING_DIMS": "test embedder only",
    "MEMSIEVE_THRESHOLD": "per embedder and kind, calibrated",
    "MEMSIEVE_BATCH_SIZE": "default sized for one transaction",
    "MEMSIEVE_LOCK_TTL": "renewed while working",
    "MEMSIEVE_MAX_ATTEMPTS": "default",
    "MEMSIEVE_SWEEP_INTERVAL": "default",
    "MEMSIEVE_VISIBILITY_TIMEOUT": "default, far above task countdowns",
    "MEMSIEVE_FLOWER_PORT": "Flower runs as its own service here, port in its command",
    "MEMSIEVE_FLOWER_ADDRESS": "Flower runs as its own service here, address in its command",
    "MEMSIEVE_FLOWER_BASIC_AUTH": "passed to Flower as FLOWER_BASIC_AUTH (required)",
    "MEMSIEVE_POLICY_FILE": "optional; mount a file and set it to use one",
    "MEMSIEVE_EMBED_RPM": "unlimited unless the provider contract says otherwise",
    "MEMSIEVE_EMBED_TPM": "unlimited unless the provider contract says otherwise",
    "MEMSIEVE_GATE_SEARCH": "memory is the fast, exact default",
    "MEMSIEVE_ON_CONFLICT": "keep: updates stay visible as conflicts until resolved",
    "MEMSIEVE_GATE_CACHE_MB": "default budget per worker process",
    "MEMSIEVE_FLUSH_SLICE_MS": "default",
    "MEMSIEVE_BACKFILL_FLUSH_EVERY_MS": "default",
    "MEMSIEVE_STARTUP_WAIT": "default; the restart policy covers longer outages",
    "MEMSIEVE_MAX_MESSAGE_BYTES": "default; 16 MiB is far above any lesson",
    "MEMSIEVE_THRESHOLD_<KIND>": "the measured per-kind table is the default",
    "MEMSIEVE_LOCAL_THREADS": "every core per worker process is the measured default",
    "MEMSIEVE_MODEL_CACHE": "the image builds the graph into the user's cache at first use",
    "MEMSIEVE_MCP_NAMESPACES": "the MCP server is not part of the compose stack",
    "MEMSIEVE_POLICY_ALLOWED_KINDS": "optional override of the policy default",
    "MEMSIEVE_POLICY_MIN_CONTENT": "optional override of the policy default",
    "MEMSIEVE_POLICY_MAX_CONTENT": "optional override of the policy default",
    "MEMSIEVE_POLICY_DENY_PATTERNS": "optional; adds to the policy file's list",
    "MEMSIEVE_POLICY_CHECKS": "optional override of the policy default",
}
_VAR = re.compile(r"\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}")


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}, for the values used here."""

    def sub(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        if env.get(name):
            return env[name]
        if op == ":?":
            raise KeyError(f"{name}: {arg}")
        return arg or ""

    return _VAR.sub(sub, value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    assert isinstance(env, dict), "environment must be a mapping"
    return {k: str(v) for k, v in env.items()}


def test_the_stack_has_its_four_services_each_with_healthcheck_and_restart(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "worker", "flower"}
    for name, svc in services.items():
        assert svc.get("restart") in ("unless-stopped", "always"), name
        hc = svc.get("healthcheck")
        assert hc and hc["test"] and hc.get("interval") and hc.get("retries"), name


def test_postgres_is_the_official_pgvector_image_with_a_volume(compose: dict[str, Any]) -> None:
    pg = compose["services"]["postgres"]
    assert pg["image"].startswith("pgvector/pgvector:pg")
    assert any(v.endswith(":/var/lib/postgresql/data") for v in pg["volumes"])
    assert "pg_isready" in " ".join(pg["healthcheck"]["test"])


def test_redis_keeps_an_append_only_file_on_a_volume(compose: dict[str, Any]) -> None:
    r = compose["services"]["redis"]
    script = REDIS_START.read_text()
    assert r["command"][-1] in {v.split(":")[1] for v in r["volumes"]}
    assert "--appendonly yes --appendfsync always" in script
    assert any(v.endswith(":/data") for v in r["volumes"])


def test_redis_needs_passwords_and_gives_the_app_the_embedded_rights(
    compose: dict[str, Any],
) -> None:
    script = REDIS_START.read_text()
    assert "user default off" in script
    app = re.search(r"^user memsieve on >\$\{REDIS_PASSWORD\} (.+)$", script, re.M)
    assert app and app.group(1) == REDIS_APP_RULES
    assert "-@admin" in REDIS_APP_RULES and "-@dangerous" in REDIS_APP_RULES
    assert "redis-cli --user memsieve" in " ".join(
        compose["services"]["redis"]["healthcheck"]["test"]
    )


def test_the_database_role_of_memsieve_is_not_the_superuser(compose: dict[str, Any]) -> None:
    pg = _env(compose["services"]["postgres"])
    assert pg["POSTGRES_USER"] == "postgres"
    assert "scram-sha-256" in pg["POSTGRES_INITDB_ARGS"]
    init = PG_INIT.read_text()
    assert "CREATE ROLE memsieve LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE" in init
    assert "CREATE DATABASE memsieve OWNER memsieve" in init
    assert "\\getenv app_password MEMSIEVE_DB_PASSWORD" in init  # not on a command line


def test_the_file_holds_no_password_and_requires_every_credential() -> None:
    text = COMPOSE.read_text()
    # A URL's password is always a required variable, never a literal or a default.
    for m in re.finditer(r"://[^:/@\s]+:([^@\s]+)@", text):
        assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]*\}", m.group(1)), m.group(0)
    for name in CREDENTIALS:
        uses = re.findall(rf"\$\{{{name}(:[-?])?", text)
        assert uses and all(op == ":?" for op in uses), name
    config = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert not re.search(r"(?i)password\s*[:=]\s*[^$\s{]", config.replace("_PASSWORD:", ""))


def test_named_volumes_are_declared(compose: dict[str, Any]) -> None:
    used = {
        v.split(":")[0]
        for svc in compose["services"].values()
        for v in svc.get("volumes", [])
        if not v.startswith((".", "/"))
    }
    assert used and used <= set(compose.get("volumes") or {})


def test_worker_scales_and_its_settings_validate(compose: dict[str, Any]) -> None:
    services = compose["services"]
    w = services["worker"]
    # --scale: no fixed name, no host port.
    assert "container_name" not in w and "ports" not in w
    assert (
        w["build"]["dockerfile"] == "docker/Dockerfile" and (ROOT / w["build"]["context"]).is_dir()
    )
    assert w["command"][:2] == ["memsieve", "worker"]
    assert set(w["depends_on"]) == {"postgres", "redis"}
    assert all(d["condition"] == "service_healthy" for d in w["depends_on"].values())
    env = {
        k: interpolate(v, {"OPENAI_API_KEY": "sk-test", **CREDENTIALS}) for k, v in _env(w).items()
    }
    unknown = {k for k in env if k not in SETTINGS_HELP}
    assert not unknown, f"compose sets variables the code does not read: {unknown}"
    settings = Settings.from_env(env)  # raises ConfigError on a bad value
    assert settings.embedder == "openai" and settings.log_format == "json"
    assert settings.concurrency == 4  # a remote embedder's default (settings.default_concurrency)
    # Metrics: exposed on the port the worker serves, on all interfaces of the container.
    assert str(settings.metrics_port) in [str(p) for p in w["expose"]]
    assert settings.metrics_address == "0.0.0.0"
    assert str(settings.metrics_port) in " ".join(w["healthcheck"]["test"])
    # Every URL points at a service of this stack, on that service's port.
    ports = {"postgres": 5432, "redis": 6379}
    for url in (settings.database_url, settings.redis_url, settings.broker_url):
        assert url
        u = urlparse(url)
        assert u.hostname in ports and u.port == ports[u.hostname], url
    u = urlparse(settings.database_url or "")
    assert (u.path.lstrip("/"), u.username) == ("memsieve", "memsieve")
    assert u.password == CREDENTIALS["MEMSIEVE_DB_PASSWORD"]
    assert urlparse(settings.broker_url or "").password == CREDENTIALS["REDIS_PASSWORD"]
    assert settings.metrics_hash_namespaces
    assert any(v.endswith(":" + str(Path(settings.key_path).parent)) for v in w["volumes"])


def test_every_setting_is_set_or_knowingly_left_at_its_default(compose: dict[str, Any]) -> None:
    env = _env(compose["services"]["worker"])
    missing = {k for k in SETTINGS_HELP if k not in env and k not in DEFAULT_IS_FINE}
    assert not missing, (
        f"new settings: set them in docker-compose.yml or list them in DEFAULT_IS_FINE: {missing}"
    )
    assert not set(DEFAULT_IS_FINE) - set(SETTINGS_HELP), (
        "DEFAULT_IS_FINE names a setting that is gone"
    )


def test_flower_requires_basic_auth_and_watches_the_workers_broker(compose: dict[str, Any]) -> None:
    f = compose["services"]["flower"]
    env = _env(f)
    auth = env["FLOWER_BASIC_AUTH"]
    with pytest.raises(KeyError):
        interpolate(auth, {})  # compose refuses to start without it
    assert interpolate(auth, {"MEMSIEVE_FLOWER_BASIC_AUTH": "ops:pw"}) == "ops:pw"
    # memsieve's launcher (it scrubs task arguments), and nothing on its command line.
    assert f["command"] == ["python", "-m", "memsieve.ops.flower"]
    assert env["CELERY_BROKER_URL"] == _env(compose["services"]["worker"])["MEMSIEVE_BROKER_URL"]
    assert any(str(p).endswith(f":{env['FLOWER_PORT']}") for p in f["ports"])
    assert f["image"] == compose["services"]["worker"]["image"]


def _compose_config(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("docker-compose")
    assert exe, "Debian's docker-compose is needed (scripts/test.sh installs it)"
    base = {k: v for k, v in os.environ.items() if k not in CREDENTIALS}
    return subprocess.run(
        [exe, "-f", str(COMPOSE), "config"],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_docker_compose_renders_the_file_and_refuses_missing_credentials() -> None:
    """`docker-compose config` (no engine needed) validates and interpolates the file."""
    done = _compose_config(CREDENTIALS)
    assert done.returncode == 0, done.stderr
    rendered = yaml.safe_load(done.stdout)
    worker = rendered["services"]["worker"]["environment"]
    assert worker["MEMSIEVE_DATABASE_URL"].startswith("postgresql://memsieve:pg-app-2@")
    assert rendered["services"]["flower"]["environment"]["FLOWER_BASIC_AUTH"] == "ops:flower-5"
    for name in CREDENTIALS:
        missing = _compose_config({k: v for k, v in CREDENTIALS.items() if k != name})
        assert missing.returncode != 0 and f"set {name}" in missing.stderr, (name, missing.stderr)


def test_dockerfile_installs_every_package_the_project_ships() -> None:
    text = DOCKERFILE.read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for folder in set(project["tool"]["setuptools"]["package-dir"].values()):
        assert re.search(rf"^COPY {folder} \./{folder}$", text, re.M), folder
    assert "EXPOSE 9464" in text and re.search(r"^USER (?!root)", text, re.M)
