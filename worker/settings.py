"""One settings object, one prefix: MEMSIEVE_* environment variables, validated at start-up."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from memsieve.errors import ConfigError

if TYPE_CHECKING:
    from memsieve.capture.policy import PolicyConfig

# The kinds a per-kind threshold may name (memsieve.schemas.events.Kind).
KINDS = ("retro", "correction", "failure", "pattern")
THRESHOLD_PREFIX = "MEMSIEVE_THRESHOLD_"

# name -> (default, help). The CLI prints this table in --help.
SETTINGS_HELP: dict[str, tuple[str, str]] = {
    "MEMSIEVE_HOME": (
        "~/.memsieve",
        "data directory of the embedded services and their state file",
    ),
    "MEMSIEVE_DATABASE_URL": (
        "embedded",
        "PostgreSQL URL (needs pgvector); default: embedded PostgreSQL in MEMSIEVE_HOME",
    ),
    "MEMSIEVE_REDIS_URL": (
        "embedded",
        "Redis URL for namespace locks and rate limits; default: embedded redis-server in MEMSIEVE_HOME",
    ),
    "MEMSIEVE_BROKER_URL": ("= MEMSIEVE_REDIS_URL", "Celery broker URL (redis:// or amqp://)"),
    "MEMSIEVE_EMBEDDER": ("openai if OPENAI_API_KEY else local", "openai | local | hashing"),
    "OPENAI_API_KEY": ("", "key for the openai embedder (never logged)"),
    "MEMSIEVE_OPENAI_BASE_URL": ("https://api.openai.com/v1", "any OpenAI-compatible endpoint"),
    "MEMSIEVE_OPENAI_MODEL": ("text-embedding-3-small", "embedding model for the openai embedder"),
    "MEMSIEVE_OPENAI_DIMENSIONS": ("1536", "vector dimensions requested from the openai embedder"),
    "MEMSIEVE_HASHING_DIMS": ("384", "dimensions of the hashing test embedder"),
    "MEMSIEVE_THRESHOLD": (
        "per embedder and kind",
        "cosine distance in [0, 2] under which a checked candidate is superseded (every kind)",
    ),
    "MEMSIEVE_THRESHOLD_<KIND>": (
        "MEMSIEVE_THRESHOLD",
        "the same for one kind (RETRO, CORRECTION, FAILURE, PATTERN); beats MEMSIEVE_THRESHOLD",
    ),
    "MEMSIEVE_BATCH_SIZE": ("256", "events claimed, embedded and written per flush round"),
    "MEMSIEVE_LOCK_TTL": (
        "10",
        "seconds; Redis namespace lock TTL (renewed every TTL/3 while working)",
    ),
    "MEMSIEVE_MAX_ATTEMPTS": ("5", "failed embedding/write attempts before an event goes dead"),
    "MEMSIEVE_SWEEP_INTERVAL": (
        "5",
        "seconds between sweeps for pending events nobody is flushing",
    ),
    "MEMSIEVE_VISIBILITY_TIMEOUT": (
        "300",
        "seconds before the Redis broker redelivers an unacked message",
    ),
    "MEMSIEVE_CONCURRENCY": (
        "2 (4 with MEMSIEVE_EMBEDDER=openai)",
        "worker processes started by `memsieve up` / `memsieve worker`",
    ),
    "MEMSIEVE_FLOWER_PORT": ("5555", "Flower port for `memsieve up` (0 disables Flower)"),
    "MEMSIEVE_FLOWER_BASIC_AUTH": (
        "",
        "user:password for Flower; required when Flower binds beyond localhost",
    ),
    "MEMSIEVE_FLOWER_ADDRESS": ("127.0.0.1", "Flower bind address"),
    "MEMSIEVE_METRICS_PORT": ("9464", "Prometheus metrics port of the worker (0 disables)"),
    "MEMSIEVE_METRICS_ADDRESS": ("127.0.0.1", "metrics bind address (0.0.0.0 in a container)"),
    "MEMSIEVE_METRICS_HASH_NAMESPACES": (
        "auto",
        "auto | true | false: namespace labels as keyed hashes (auto: when metrics bind "
        "beyond localhost)",
    ),
    "MEMSIEVE_KEY_FILE": (
        "MEMSIEVE_HOME/memsieve.key",
        "HMAC key for fingerprints and ids of refused events (created 0600 at first use); "
        "share one file among the workers of one store",
    ),
    "MEMSIEVE_LOG_FORMAT": ("text", "text | json"),
    "MEMSIEVE_LOG_LEVEL": ("INFO", "DEBUG | INFO | WARNING | ERROR"),
    "MEMSIEVE_POLICY_FILE": ("", "YAML/JSON capture policy settings per namespace"),
    "MEMSIEVE_POLICY_ALLOWED_KINDS": (
        "all kinds",
        "capture policy: comma list of the kinds admitted (beats the policy file)",
    ),
    "MEMSIEVE_POLICY_MIN_CONTENT": ("policy default", "capture policy: shortest content admitted"),
    "MEMSIEVE_POLICY_MAX_CONTENT": ("policy default", "capture policy: longest content admitted"),
    "MEMSIEVE_POLICY_DENY_PATTERNS": (
        "[]",
        "capture policy: JSON list of regexes refused, added to the file's",
    ),
    "MEMSIEVE_POLICY_CHECKS": (
        "reasoning,trivia,derivable",
        "capture policy: comma list of heuristics on (empty: off)",
    ),
    "MEMSIEVE_MAX_MESSAGE_BYTES": (
        "16777216",
        "largest capture message body in bytes (a compressed one is inflated only up to it); "
        "a larger one is recorded as message_too_large",
    ),
    "MEMSIEVE_STARTUP_WAIT": (
        "120",
        "seconds a starting worker waits for the database before giving up",
    ),
    "MEMSIEVE_EMBED_RPM": (
        "0",
        "embedding requests per minute shared by all workers through Redis (0: unlimited)",
    ),
    "MEMSIEVE_EMBED_TPM": (
        "0",
        "embedding tokens per minute shared by all workers through Redis (0: unlimited)",
    ),
    "MEMSIEVE_ON_CONFLICT": (
        "keep",
        "what an update of a live memory does: keep (both stay live, linked as a conflict) | "
        "newest (the update supersedes it); per namespace: keep,team-a=newest",
    ),
    "MEMSIEVE_UPDATE_BAND": (
        "0",
        "how far past the supersede threshold (in MiniLM's cosine distance) the classifier "
        "judge still looks for updates, linked as conflicts, never superseded (0: off; 0.15 "
        "finds most updates worded far apart, at up to twice the judge's cost per event)",
    ),
    "MEMSIEVE_GATE_SEARCH": (
        "memory",
        "memory (exact, per-worker matrix of a namespace's live vectors; a namespace over "
        "MEMSIEVE_GATE_CACHE_MB is searched in SQL) | sql (one exact query per event)",
    ),
    "MEMSIEVE_LOCAL_THREADS": (
        "0",
        "cores the local embedder uses per worker process (0: every core this process may use)",
    ),
    "MEMSIEVE_MODEL_CACHE": (
        "$XDG_CACHE_HOME/memsieve or ~/.cache/memsieve",
        "where the local embedder keeps the ONNX graph it builds from the packaged weights, and "
        "ONNX Runtime's optimised copy of it",
    ),
    "MEMSIEVE_MCP_NAMESPACES": (
        "",
        "comma list of the namespaces `memsieve mcp` may use (when no --namespace is given)",
    ),
    "MEMSIEVE_JUDGE": (
        "classifier",
        "judge of close pairs: classifier (trained pair classifier over token alignment and "
        "guard signals; the default) | guards (lexical guards alone: more false supersedes)",
    ),
    "MEMSIEVE_JUDGE_SHARE_TTL_S": (
        "60",
        "seconds the classifier judge's token vectors of a text stay in Redis for the other "
        "worker processes (half precision, ~23 KB a text; 0: each process computes its own)",
    ),
    "MEMSIEVE_JUDGE_LLM_MODEL": ("", "chat model of the optional LLM judge (unset: off)"),
    "MEMSIEVE_JUDGE_LLM_BASE_URL": (
        "= MEMSIEVE_OPENAI_BASE_URL",
        "OpenAI-compatible endpoint of the LLM judge",
    ),
    "MEMSIEVE_JUDGE_LLM_API_KEY": (
        "= OPENAI_API_KEY",
        "key of the LLM judge's endpoint (never logged)",
    ),
    "MEMSIEVE_JUDGE_LLM_RPM": (
        "0",
        "LLM judge requests per minute, shared by all workers (0: no limit)",
    ),
    "MEMSIEVE_JUDGE_LLM_TPM": (
        "0",
        "LLM judge tokens per minute, shared by all workers (0: no limit)",
    ),
    "MEMSIEVE_GATE_CACHE_MB": (
        "512",
        "per-process budget for cached namespaces' vectors (least recently used evicted); a "
        "namespace larger than all of it is searched in SQL (~80,000 rows of 1,536 d at 512)",
    ),
    "MEMSIEVE_FLUSH_SLICE_MS": (
        "1000",
        "a flush drains about this long, then re-queues the rest behind live work",
    ),
    "MEMSIEVE_YIELD_TO_LIVE": (
        "true",
        "a flush delivered on the flush or backfill lane stops after its batch in hand when "
        "a higher lane has messages on the Redis broker (false: only the time slice bounds it)",
    ),
    "MEMSIEVE_EMBED_AHEAD": (
        "true",
        "a flush with more than a batch pending wakes another worker, which embeds the "
        "namespace's next events into the cache while the first gates (false: it only "
        "retries later)",
    ),
    "MEMSIEVE_BACKFILL_FLUSH_EVERY_MS": (
        "10000",
        "a backfilled namespace gets a flush ahead of the backlog at most this often",
    ),
}


def _load_policy(policy_file: str | None, env: Mapping[str, str]) -> PolicyConfig:
    # Imported here: the policy module is the heaviest part of start-up, and only
    # settings that are built with a policy need it.
    from memsieve.capture.policy import PolicyConfig

    return PolicyConfig.load(policy_file, env)


def _choice(env: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str) -> str:
    value = (env.get(name) or default).strip().lower()
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def default_concurrency(embedder: str) -> int:
    """Worker processes when MEMSIEVE_CONCURRENCY is unset: 2 with a model on this machine
    (each process computes; more would only share the cores and hold more copies of the
    model), 4 with a remote embedder, whose processes spend much of a flush waiting for the
    provider's answer: at 2 the cores were 35 % idle through the headline benchmark, and 4
    processes gave 1.3x its events/s (docs/performance.md, stop 28)."""
    return 4 if embedder == "openai" else 2


def _int(env: Mapping[str, str], name: str, default: int, lo: int = 0) -> int:
    raw = env.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if value < lo:
        raise ConfigError(f"{name} must be >= {lo}, got {value}")
    return value


def _distance(env: Mapping[str, str], name: str) -> float | None:
    """A cosine distance threshold: a number in [0, 2] (0: only byte-identical text merges)."""
    raw = env.get(name, "")
    if raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value) or not 0.0 <= value <= 2.0:
        raise ConfigError(f"{name} must be a cosine distance in [0, 2], got {raw!r}")
    return value


def _kind_thresholds(env: Mapping[str, str]) -> dict[str, float]:
    """MEMSIEVE_THRESHOLD_<KIND> overrides; a name that is not a kind is an error."""
    out: dict[str, float] = {}
    for name in sorted(env):
        if not name.startswith(THRESHOLD_PREFIX) or env[name] == "":
            continue
        kind = name.removeprefix(THRESHOLD_PREFIX).lower()
        if kind not in KINDS:
            raise ConfigError(
                f"{name}: unknown kind {kind!r} (one of {', '.join(k.upper() for k in KINDS)})"
            )
        value = _distance(env, name)
        assert value is not None
        out[kind] = value
    return out


def _url(env: Mapping[str, str], name: str, schemes: tuple[str, ...]) -> str | None:
    raw = env.get(name, "")
    if raw == "":
        return None
    parsed = urlparse(raw)
    if parsed.scheme not in schemes or not (parsed.hostname or parsed.path):
        raise ConfigError(f"{name} must be a {'/'.join(schemes)} URL, got {redact_url(raw)!r}")
    return raw


def is_loopback(address: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: reachable from this machine only."""
    return address in ("localhost", "::1") or address.startswith("127.")


def redact_url(url: str) -> str:
    """The URL with any password replaced, safe to log."""
    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@", 1)
    return url


ON_CONFLICT_POLICIES = ("keep", "newest")


def parse_on_conflict(raw: str) -> tuple[str, dict[str, str]]:
    """MEMSIEVE_ON_CONFLICT: "keep", "newest", or a comma list of a default and ns=policy."""
    default, by_ns = "keep", {}
    for item in (p.strip() for p in raw.split(",")):
        if not item:
            continue
        ns, sep, policy = item.rpartition("=")
        if policy not in ON_CONFLICT_POLICIES or (sep and not ns.strip()):
            raise ConfigError(
                "MEMSIEVE_ON_CONFLICT must be keep or newest, optionally per namespace"
                f" (keep,team-a=newest), got {raw!r}"
            )
        if sep:
            by_ns[ns.strip()] = policy
        else:
            default = policy
    return default, by_ns


@dataclass
class Settings:
    home: Path
    database_url: str | None
    redis_url: str | None
    broker_url: str | None
    embedder: str
    openai_api_key: str = field(repr=False)
    openai_base_url: str | None
    openai_model: str
    openai_dimensions: int
    hashing_dims: int
    threshold: float | None
    batch_size: int
    lock_ttl: int
    max_attempts: int
    sweep_interval: int
    visibility_timeout: int
    concurrency: int
    flower_port: int
    flower_basic_auth: str = field(repr=False)
    flower_address: str
    metrics_port: int
    metrics_address: str
    log_format: str
    log_level: str
    policy_file: str | None
    metrics_hash_namespaces: bool = False
    key_file: str | None = None
    # A flush task drains for about this long, then re-queues the rest on the flush lane,
    # so a live lesson never waits for a whole backlog (worker/flow/pipeline.py).
    flush_slice_ms: int = 1000
    # A backfilled namespace gets a flush ahead of the backlog at most this often; its
    # other flushes queue behind the backfill's captures and drain full batches.
    backfill_flush_every_ms: int = 10000
    # A flush off the live lane also stops between batches when live captures wait.
    yield_to_live: bool = True
    embed_ahead: bool = True
    # Largest capture message accepted (bytes of the body as the broker delivers it).
    max_message_bytes: int = 16 * 1024 * 1024
    # The optional LLM judge of the gate (memsieve.judge_llm): off while the model is "".
    # MEMSIEVE_JUDGE: guards | classifier (docs/dedupe-quality.md has both measured).
    judge: str = "classifier"
    judge_share_ttl_s: int = 60
    judge_llm_model: str = ""
    judge_llm_base_url: str | None = None
    judge_llm_api_key: str = field(default="", repr=False)
    judge_llm_rpm: int = 0
    judge_llm_tpm: int = 0
    # MEMSIEVE_THRESHOLD_<KIND>, by lower-case kind; beats `threshold`.
    kind_thresholds: dict[str, float] = field(default_factory=dict)
    embed_rpm: int = 0
    embed_tpm: int = 0
    gate_search: str = "memory"
    gate_cache_mb: int = 512
    startup_wait: int = 120
    # 0: every core this process may use.
    local_threads: int = 0
    model_cache: Path = field(default_factory=lambda: Path("~/.cache/memsieve").expanduser())
    # The capture policy: defaults, MEMSIEVE_POLICY_FILE, MEMSIEVE_POLICY_* (loaded once).
    policy: PolicyConfig | None = field(default=None, repr=False)
    # MEMSIEVE_MCP_NAMESPACES: the MCP server's namespaces when no --namespace is given.
    mcp_namespaces: tuple[str, ...] = ()
    # MEMSIEVE_ON_CONFLICT: the default policy and per-namespace choices (keep | newest).
    on_conflict: str = "keep"
    on_conflict_by_namespace: dict[str, str] = field(default_factory=dict)
    # MEMSIEVE_UPDATE_BAND: the classifier judge's update band past the threshold (0: off).
    update_band: float = 0.0

    def on_conflict_for(self, namespace: str) -> str:
        """keep | newest: what the gate does with an update of a live memory in `namespace`."""
        return self.on_conflict_by_namespace.get(namespace, self.on_conflict)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, with_policy: bool = True) -> Settings:
        """Every setting, validated. `with_policy=False` leaves the capture policy unloaded
        (policy=None): commands that only read the store skip its ~0.2 s import."""
        env = os.environ if env is None else env
        home = Path(env.get("MEMSIEVE_HOME") or "~/.memsieve").expanduser()
        key = env.get("OPENAI_API_KEY", "")
        embedder = env.get("MEMSIEVE_EMBEDDER", "") or ("openai" if key else "local")
        if embedder not in ("openai", "local", "hashing"):
            raise ConfigError(
                f"MEMSIEVE_EMBEDDER must be openai, local or hashing, got {embedder!r}"
            )
        if embedder == "openai" and not key:
            raise ConfigError("MEMSIEVE_EMBEDDER=openai needs OPENAI_API_KEY")
        log_format = env.get("MEMSIEVE_LOG_FORMAT", "text")
        if log_format not in ("text", "json"):
            raise ConfigError(f"MEMSIEVE_LOG_FORMAT must be text or json, got {log_format!r}")
        log_level = env.get("MEMSIEVE_LOG_LEVEL", "INFO").upper()
        if log_level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise ConfigError(
                f"MEMSIEVE_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, got {log_level!r}"
            )
        gate_search = env.get("MEMSIEVE_GATE_SEARCH", "") or "memory"
        if gate_search not in ("memory", "sql"):
            raise ConfigError("MEMSIEVE_GATE_SEARCH must be memory or sql")
        # Imported here: the policy module is the heaviest part of start-up, and only
        # settings that are built need it.
        policy_file = env.get("MEMSIEVE_POLICY_FILE") or None
        auth = env.get("MEMSIEVE_FLOWER_BASIC_AUTH", "")
        # Flower takes a comma list of user:password; an empty user or password would let
        # anyone in with empty credentials.
        for pair in auth.split(",") if auth else ():
            user, sep, password = pair.partition(":")
            if not sep or not user.strip() or not password.strip():
                raise ConfigError(
                    "MEMSIEVE_FLOWER_BASIC_AUTH must be user:password, both non-empty"
                )
        metrics_address = env.get("MEMSIEVE_METRICS_ADDRESS", "") or "127.0.0.1"
        hash_ns = (env.get("MEMSIEVE_METRICS_HASH_NAMESPACES", "") or "auto").lower()
        if hash_ns not in ("auto", "true", "false", "1", "0", "yes", "no"):
            raise ConfigError(
                f"MEMSIEVE_METRICS_HASH_NAMESPACES must be auto, true or false, got {hash_ns!r}"
            )
        redis_url = _url(env, "MEMSIEVE_REDIS_URL", ("redis", "rediss", "unix"))
        on_conflict, on_conflict_ns = parse_on_conflict(env.get("MEMSIEVE_ON_CONFLICT", ""))
        return cls(
            home=home,
            database_url=_url(env, "MEMSIEVE_DATABASE_URL", ("postgresql", "postgres")),
            redis_url=redis_url,
            broker_url=_url(
                env, "MEMSIEVE_BROKER_URL", ("redis", "rediss", "amqp", "pyamqp", "unix")
            ),
            embedder=embedder,
            openai_api_key=key,
            openai_base_url=_url(env, "MEMSIEVE_OPENAI_BASE_URL", ("http", "https")),
            openai_model=env.get("MEMSIEVE_OPENAI_MODEL", "") or "text-embedding-3-small",
            openai_dimensions=_int(env, "MEMSIEVE_OPENAI_DIMENSIONS", 1536, 1),
            hashing_dims=_int(env, "MEMSIEVE_HASHING_DIMS", 384, 8),
            threshold=_distance(env, "MEMSIEVE_THRESHOLD"),
            batch_size=_int(env, "MEMSIEVE_BATCH_SIZE", 256, 1),
            lock_ttl=_int(env, "MEMSIEVE_LOCK_TTL", 10, 1),
            max_attempts=_int(env, "MEMSIEVE_MAX_ATTEMPTS", 5, 1),
            sweep_interval=_int(env, "MEMSIEVE_SWEEP_INTERVAL", 5, 1),
            visibility_timeout=_int(env, "MEMSIEVE_VISIBILITY_TIMEOUT", 300, 10),
            concurrency=_int(env, "MEMSIEVE_CONCURRENCY", default_concurrency(embedder), 1),
            flower_port=_int(env, "MEMSIEVE_FLOWER_PORT", 5555, 0),
            flower_basic_auth=auth,
            flower_address=env.get("MEMSIEVE_FLOWER_ADDRESS", "") or "127.0.0.1",
            metrics_port=_int(env, "MEMSIEVE_METRICS_PORT", 9464, 0),
            metrics_address=metrics_address,
            log_format=log_format,
            log_level=log_level,
            policy_file=policy_file,
            metrics_hash_namespaces=(
                not is_loopback(metrics_address)
                if hash_ns == "auto"
                else hash_ns in ("true", "1", "yes")
            ),
            key_file=env.get("MEMSIEVE_KEY_FILE") or None,
            flush_slice_ms=_int(env, "MEMSIEVE_FLUSH_SLICE_MS", 1000, 1),
            backfill_flush_every_ms=_int(env, "MEMSIEVE_BACKFILL_FLUSH_EVERY_MS", 10000, 0),
            yield_to_live=_choice(env, "MEMSIEVE_YIELD_TO_LIVE", ("true", "false"), "true")
            == "true",
            embed_ahead=_choice(env, "MEMSIEVE_EMBED_AHEAD", ("true", "false"), "true") == "true",
            max_message_bytes=_int(env, "MEMSIEVE_MAX_MESSAGE_BYTES", 16 * 1024 * 1024, 1024),
            judge=_choice(env, "MEMSIEVE_JUDGE", ("guards", "classifier"), "classifier"),
            judge_share_ttl_s=_int(env, "MEMSIEVE_JUDGE_SHARE_TTL_S", 60, 0),
            judge_llm_model=env.get("MEMSIEVE_JUDGE_LLM_MODEL", "").strip(),
            judge_llm_base_url=_url(env, "MEMSIEVE_JUDGE_LLM_BASE_URL", ("http", "https"))
            or _url(env, "MEMSIEVE_OPENAI_BASE_URL", ("http", "https")),
            judge_llm_api_key=env.get("MEMSIEVE_JUDGE_LLM_API_KEY", "") or key,
            judge_llm_rpm=_int(env, "MEMSIEVE_JUDGE_LLM_RPM", 0, 0),
            judge_llm_tpm=_int(env, "MEMSIEVE_JUDGE_LLM_TPM", 0, 0),
            kind_thresholds=_kind_thresholds(env),
            embed_rpm=_int(env, "MEMSIEVE_EMBED_RPM", 0, 0),
            embed_tpm=_int(env, "MEMSIEVE_EMBED_TPM", 0, 0),
            gate_search=gate_search,
            gate_cache_mb=_int(env, "MEMSIEVE_GATE_CACHE_MB", 512, 1),
            startup_wait=_int(env, "MEMSIEVE_STARTUP_WAIT", 120, 0),
            local_threads=_int(env, "MEMSIEVE_LOCAL_THREADS", 0, 0),
            model_cache=Path(
                env.get("MEMSIEVE_MODEL_CACHE")
                or Path(env.get("XDG_CACHE_HOME") or "~/.cache") / "memsieve"
            ).expanduser(),
            mcp_namespaces=tuple(
                dict.fromkeys(
                    n.strip()
                    for n in env.get("MEMSIEVE_MCP_NAMESPACES", "").split(",")
                    if n.strip()
                )
            ),
            policy=_load_policy(policy_file, env) if with_policy else None,
            on_conflict=on_conflict,
            on_conflict_by_namespace=on_conflict_ns,
            update_band=_distance(env, "MEMSIEVE_UPDATE_BAND") or 0.0,
        )

    @property
    def key_path(self) -> Path:
        """The install's HMAC key file (MEMSIEVE_KEY_FILE, else in MEMSIEVE_HOME)."""
        return Path(self.key_file).expanduser() if self.key_file else self.home / "memsieve.key"

    # The state file written by the embedded services: other commands find them there.
    @property
    def state_file(self) -> Path:
        return self.home / "services.json"

    def read_state(self) -> dict[str, str]:
        try:
            data = json.loads(self.state_file.read_text())
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def resolved(self) -> Settings:
        """Fill unset URLs from the embedded services' state file (if they run)."""
        state = self.read_state()
        db = self.database_url or state.get("database_url")
        redis = self.redis_url or state.get("redis_url")
        broker = self.broker_url or redis
        if not db or not redis:
            raise ConfigError(
                "no database/redis configured and no embedded services running: "
                "start them with `memsieve up` (or set MEMSIEVE_DATABASE_URL and MEMSIEVE_REDIS_URL)"
            )
        copy = Settings(**{**self.__dict__})
        copy.database_url, copy.redis_url, copy.broker_url = db, redis, broker
        return copy


def settings_help() -> str:
    lines = ["settings (environment):"]
    for name, (default, text) in SETTINGS_HELP.items():
        lines.append(f"  {name:<30} {text} [default: {default}]")
    return "\n".join(lines)
