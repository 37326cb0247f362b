"""Names that several parts must agree on: Redis keys, queues, task names."""

# Three lanes, consumed in this order of priority (Redis: strictly, see worker/app.py):
# live captures (what producers and agents send) and the flushes they wake; retries,
# leftovers of a flush's time slice and a backfilled namespace's first flush; backfill
# captures (`memsieve backfill`, `memsieve enqueue` of several events), their other
# flushes and the sweeper's. A live lesson never waits behind a backlog.
QUEUE = "memsieve"
QUEUE_FLUSH = "memsieve.flush"
QUEUE_BACKFILL = "memsieve.backfill"
QUEUES = (QUEUE, QUEUE_FLUSH, QUEUE_BACKFILL)

TASK_CAPTURE = "memsieve.capture"
TASK_FLUSH = "memsieve.flush"

KEY_PREFIX = "memsieve"


def lock_key(namespace: str) -> str:
    return f"{KEY_PREFIX}:lock:ns:{namespace}"


def flush_retry_key(namespace: str) -> str:
    return f"{KEY_PREFIX}:flush-retry:ns:{namespace}"


def embed_ahead_key(namespace: str) -> str:
    """Held while a worker embeds a busy namespace's next events ahead of its flush."""
    return f"{KEY_PREFIX}:embed-ahead:ns:{namespace}"


def embed_ahead_wake_key(namespace: str) -> str:
    """Set for a few seconds when a flush has asked another worker to embed ahead of it."""
    return f"{KEY_PREFIX}:embed-ahead-wake:ns:{namespace}"


def embed_ahead_failed_key(namespace: str) -> str:
    """Content hashes a worker failed to embed ahead: never tried ahead again, so a poison
    input costs its namespace at most one extra attempt beyond the flush's own."""
    return f"{KEY_PREFIX}:embed-ahead-failed:ns:{namespace}"


def flush_scheduled_key(namespace: str, lane: str = QUEUE) -> str:
    """Set while a flush woken from `lane` (live or backfill) is queued and not yet draining
    (tasks/capture.py). One marker per lane: a backfill's queued flush never mutes the
    wake-up of a live capture."""
    if lane == QUEUE:
        return f"{KEY_PREFIX}:flush-scheduled:ns:{namespace}"
    return f"{KEY_PREFIX}:flush-scheduled:{lane}:ns:{namespace}"


def draining_key(namespace: str) -> str:
    """Set from a namespace's first batch until a flush finds nothing pending: it is being
    drained, so a flush's first batch is a full one (memsieve.flow.pipeline)."""
    return f"{KEY_PREFIX}:draining:ns:{namespace}"


def backfill_flushed_key(namespace: str) -> str:
    """Set for MEMSIEVE_BACKFILL_FLUSH_EVERY_MS after a backfill flush of the namespace was
    queued ahead of the backlog; meanwhile its flushes queue behind it (tasks/capture.py)."""
    return f"{KEY_PREFIX}:backfill-flushed:ns:{namespace}"


SWEEP_LEADER_KEY = f"{KEY_PREFIX}:sweep-leader"
# Refused messages (secret or invalid) since the start, and the count at the last rewrite
# of the broker's append-only file (worker/ops/scrub.py).
REFUSALS_KEY = f"{KEY_PREFIX}:refusals"
SCRUBBED_KEY = f"{KEY_PREFIX}:aof-scrubbed"

# Postgres advisory lock classid for namespace write locks (the objid is a hash).
ADVISORY_MIGRATIONS = 0x6D656D73  # "mems"


def tokens_key(model: str, text_digest: str) -> str:
    """A text's contextual token vectors from `model`, shared by every worker process for
    the classifier judge (memsieve.embedders.token_share); by the text's SHA-256, never the
    text itself."""
    return f"{KEY_PREFIX}:tokens:{model}:{text_digest}"
