-- History you can ask and decisions you can undo (issue 7).
--
-- memories.created_at / deleted_at describe one live interval. A revert brings a hidden row
-- back, so a row can be live, hidden, and live again: `memory_liveness` keeps every interval
-- and as-of recall reads it. `memory_revisions` is the append-only audit log of every change
-- to liveness that a decision made: supersede (a write hid a row), revert (a person or agent
-- brought it back), unrevert (a revert was undone). Both are filled by triggers on memories,
-- so the write path (worker/store/postgres.py) does not have to know about them, and backfilled here.

-- The clock every history-aware default reads: the transaction-local setting memsieve.now
-- when one is set (`Store.write_batch(now=...)`, `revert(at=...)`: replays and tests with
-- fixed timestamps), else clock_timestamp(), the write path's clock since 001.
CREATE FUNCTION memsieve_now() RETURNS timestamptz
LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(nullif(current_setting('memsieve.now', true), '')::timestamptz,
                    clock_timestamp())
$$;

ALTER TABLE memories ALTER COLUMN created_at SET DEFAULT memsieve_now();

-- The decision record of every written event, merges included: a merge writes no memory
-- row, so its record (the identical candidate, threshold, embedder) lives on the event.
ALTER TABLE events ADD COLUMN decision_record jsonb;

CREATE TABLE memory_liveness (
    memory_id uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    live_from timestamptz NOT NULL,
    live_to   timestamptz,            -- NULL: live now
    PRIMARY KEY (memory_id, live_from),
    CHECK (live_to IS NULL OR live_to >= live_from)
);
-- At most one open interval per memory: a row is live once, not twice.
CREATE UNIQUE INDEX memory_liveness_open ON memory_liveness (memory_id) WHERE live_to IS NULL;
CREATE INDEX memory_liveness_from ON memory_liveness (live_from);

CREATE TABLE memory_revisions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind       text NOT NULL CHECK (kind IN ('supersede', 'revert', 'unrevert')),
    namespace  text NOT NULL,
    -- the link: `newer` (the row whose write superseded) hid or hides `older`
    newer_id   uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    older_id   uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    at         timestamptz NOT NULL,
    actor      text,
    reason     text,
    event_id   text,                  -- the capture event, for kind = 'supersede'
    undoes     bigint REFERENCES memory_revisions (id),
    CHECK ((kind = 'supersede') = (undoes IS NULL)),
    CHECK (newer_id <> older_id)
);
-- One supersede per link, and each revision is undone at most once: the steps on a link
-- form a line (supersede, revert, unrevert, revert, ...), never a tree.
CREATE UNIQUE INDEX memory_revisions_link ON memory_revisions (newer_id) WHERE kind = 'supersede';
CREATE UNIQUE INDEX memory_revisions_undoes ON memory_revisions (undoes);
CREATE INDEX memory_revisions_older ON memory_revisions (older_id);

CREATE FUNCTION memsieve_track_liveness() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO memory_liveness (memory_id, live_from, live_to)
        VALUES (NEW.id, NEW.created_at, NEW.deleted_at);
        IF NEW.supersedes IS NOT NULL THEN
            INSERT INTO memory_revisions (kind, namespace, newer_id, older_id, at, actor,
                                          reason, event_id)
            VALUES ('supersede', NEW.namespace, NEW.id, NEW.supersedes, NEW.created_at,
                    NEW.agent, NEW.decision ->> 'reason', NEW.event_id);
        END IF;
    ELSIF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
        UPDATE memory_liveness SET live_to = NEW.deleted_at
        WHERE memory_id = NEW.id AND live_to IS NULL;
    ELSIF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN
        INSERT INTO memory_liveness (memory_id, live_from) VALUES (NEW.id, memsieve_now());
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_track_liveness
AFTER INSERT OR UPDATE OF deleted_at ON memories
FOR EACH ROW EXECUTE FUNCTION memsieve_track_liveness();

-- Backfill: rows written before this migration had one interval each, and every
-- supersedes link in place was made by a write.
INSERT INTO memory_liveness (memory_id, live_from, live_to)
SELECT id, created_at, deleted_at FROM memories;

INSERT INTO memory_revisions (kind, namespace, newer_id, older_id, at, actor, reason, event_id)
SELECT 'supersede', namespace, id, supersedes, created_at, agent, decision ->> 'reason', event_id
FROM memories WHERE supersedes IS NOT NULL
ORDER BY created_at;
