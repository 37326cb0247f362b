"""docker-compose.yml, checked without a Docker engine: parse it and hold it to the code.

When a setting is added to worker/settings.py, this test asks for a decision: set it in
the compose file, or list it in DEFAULT_IS_FINE with the reason it needs no value there.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from memsieve.settings import SETTINGS_HELP, Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"

# Settings the compose stack leaves at their defaults, and why that is right there.
DEFAULT_IS_FINE = {
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
    "MEMSIEVE_GATE_CACHE_MB": "default budget per worker process",
    "MEMSIEVE_STARTUP_WAIT": "default; the restart policy covers longer outages",
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
    cmd = r["command"]
    assert cmd[cmd.index("--appendonly") + 1] == "yes"
    assert any(v.endswith(":/data") for v in r["volumes"])


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
    env = {k: interpolate(v, {"OPENAI_API_KEY": "sk-test"}) for k, v in _env(w).items()}
    unknown = {k for k in env if k not in SETTINGS_HELP}
    assert not unknown, f"compose sets variables the code does not read: {unknown}"
    settings = Settings.from_env(env)  # raises ConfigError on a bad value
    assert settings.embedder == "openai" and settings.log_format == "json"
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
    db = _env(services["postgres"])
    u = urlparse(settings.database_url or "")
    assert u.path.lstrip("/") == db["POSTGRES_DB"] and u.username == db["POSTGRES_USER"]


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
    auth = _env(f)["FLOWER_BASIC_AUTH"]
    with pytest.raises(KeyError):
        interpolate(auth, {})  # compose refuses to start without it
    assert interpolate(auth, {"MEMSIEVE_FLOWER_BASIC_AUTH": "ops:pw"}) == "ops:pw"
    cmd = f["command"]
    assert cmd[:3] == ["celery", "-A", "memsieve.app"] and "flower" in cmd
    broker = next(c.split("=", 1)[1] for c in cmd if c.startswith("--broker="))
    assert broker == _env(compose["services"]["worker"])["MEMSIEVE_BROKER_URL"]
    port = next(c.split("=", 1)[1] for c in cmd if c.startswith("--port="))
    assert any(str(p).endswith(f":{port}") for p in f["ports"])
    assert f["image"] == compose["services"]["worker"]["image"]


def test_dockerfile_installs_every_package_the_project_ships() -> None:
    text = DOCKERFILE.read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for folder in set(project["tool"]["setuptools"]["package-dir"].values()):
        assert re.search(rf"^COPY {folder} \./{folder}$", text, re.M), folder
    assert "EXPOSE 9464" in text and re.search(r"^USER (?!root)", text, re.M)
