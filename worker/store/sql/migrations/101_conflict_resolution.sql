-- Who resolved a conflict and why (`memsieve resolve --actor --reason`), cleared with the
-- rest of the closing when a revert reopens the conflict (migration 100's trigger, redefined).
ALTER TABLE memory_conflicts ADD COLUMN closed_by text;
ALTER TABLE memory_conflicts ADD COLUMN note text;

CREATE OR REPLACE FUNCTION memsieve_track_conflicts() RETURNS trigger
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
        SET closed_at = NULL, closed_how = NULL, loser_id = NULL, closed_by = NULL, note = NULL
        WHERE c.loser_id = NEW.id
          AND EXISTS (
              SELECT 1 FROM memories m
              WHERE m.id = CASE WHEN c.older_id = NEW.id THEN c.newer_id ELSE c.older_id END
                AND m.deleted_at IS NULL);
    END IF;
    RETURN NULL;
END
$$;
