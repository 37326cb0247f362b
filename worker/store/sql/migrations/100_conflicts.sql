-- Conflicts: two live memories of one namespace that the gate judged an update of one
-- another (same subject and slot, a new value), kept both by default (issue 15).
--
-- The gate opens one when it inserts the newer memory (worker/store/gate_write.py). A
-- conflict closes when either member is hidden, however that happens: a correction or
-- `memsieve resolve` superseding one with reason `update` (how = 'update' or 'resolved', set
-- by the writer in the transaction-local setting memsieve.close_how), a later rewording
-- superseding one ('superseded'), MEMSIEVE_ON_CONFLICT=newest never opens one. A revert that
-- brings the hidden member back while the other is live reopens it: the contradiction is
-- back. The trigger below does both, so every writer (gate, resolve, revert) keeps the table
-- true without knowing about it.
CREATE TABLE memory_conflicts (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace  text NOT NULL,
    older_id   uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    newer_id   uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    event_id   text,                  -- the capture event that wrote the newer memory
    verdict    text NOT NULL DEFAULT 'update',
    judge      text,                  -- which judge said so, its confidence and why
    score      double precision,
    detail     text,
    distance   double precision,
    opened_at  timestamptz NOT NULL,
    closed_at  timestamptz,
    closed_how text CHECK (closed_how IN ('update', 'resolved', 'superseded')),
    loser_id   uuid REFERENCES memories (id) ON DELETE CASCADE,   -- the member hidden
    CHECK (older_id <> newer_id),
    CHECK ((closed_at IS NULL) = (closed_how IS NULL)),
    CHECK ((closed_at IS NULL) = (loser_id IS NULL)),
    CHECK (closed_at IS NULL OR closed_at >= opened_at)
);
CREATE UNIQUE INDEX memory_conflicts_pair ON memory_conflicts (older_id, newer_id);
CREATE INDEX memory_conflicts_open ON memory_conflicts (namespace, opened_at)
    WHERE closed_at IS NULL;
CREATE INDEX memory_conflicts_older ON memory_conflicts (older_id);
CREATE INDEX memory_conflicts_newer ON memory_conflicts (newer_id);
CREATE INDEX memory_conflicts_loser ON memory_conflicts (loser_id);

CREATE FUNCTION memsieve_track_conflicts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
        UPDATE memory_conflicts
        SET closed_at = greatest(NEW.deleted_at, opened_at),
            closed_how = coalesce(nullif(current_setting('memsieve.close_how', true), ''),
                                  'superseded'),
            loser_id = NEW.id
        WHERE closed_at IS NULL AND NEW.id IN (older_id, newer_id);
    ELSIF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN
        UPDATE memory_conflicts c
        SET closed_at = NULL, closed_how = NULL, loser_id = NULL
        WHERE c.loser_id = NEW.id
          AND EXISTS (
              SELECT 1 FROM memories m
              WHERE m.id = CASE WHEN c.older_id = NEW.id THEN c.newer_id ELSE c.older_id END
                AND m.deleted_at IS NULL);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_track_conflicts
AFTER UPDATE OF deleted_at ON memories
FOR EACH ROW EXECUTE FUNCTION memsieve_track_conflicts();
