"""Names that several parts must agree on: Redis keys, queues, task names."""

QUEUE = "memsieve"

TASK_CAPTURE = "memsieve.capture"
TASK_FLUSH = "memsieve.flush"

KEY_PREFIX = "memsieve"


def lock_key(namespace: str) -> str:
    return f"{KEY_PREFIX}:lock:ns:{namespace}"


def flush_retry_key(namespace: str) -> str:
    return f"{KEY_PREFIX}:flush-retry:ns:{namespace}"


def flush_scheduled_key(namespace: str) -> str:
    """Set while a flush of the namespace is queued and not yet draining (tasks/capture.py)."""
    return f"{KEY_PREFIX}:flush-scheduled:ns:{namespace}"


SWEEP_LEADER_KEY = f"{KEY_PREFIX}:sweep-leader"
# Refused messages (secret or invalid) since the start, and the count at the last rewrite
# of the broker's append-only file (worker/ops/scrub.py).
REFUSALS_KEY = f"{KEY_PREFIX}:refusals"
SCRUBBED_KEY = f"{KEY_PREFIX}:aof-scrubbed"

# Postgres advisory lock classid for namespace write locks (the objid is a hash).
ADVISORY_MIGRATIONS = 0x6D656D73  # "mems"
