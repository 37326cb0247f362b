-- Each memory row carries the namespace version its last change produced (issue 16).
--
-- A worker's cached copy of a namespace's live vectors (worker/gate/vectors.py) at version
-- v0, when the namespace is now at v1, needs only the rows whose row_version is in
-- (v0, v1]: the rows another worker or tool inserted, superseded or re-embedded since.
-- One bump per changed row, as before (050): the gate's "only my own writes" check holds.
-- The version is now taken in a BEFORE trigger so the row can record it; a hard delete
-- (never done by memsieve) still bumps the version without a row to show for it, which a
-- worker notices (fewer changed rows than bumps) and answers with a full reload.
ALTER TABLE memories ADD COLUMN row_version bigint;

CREATE FUNCTION memsieve_stamp_row_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO namespace_versions AS v (namespace, version) VALUES (NEW.namespace, 1)
    ON CONFLICT (namespace) DO UPDATE SET version = v.version + 1
    RETURNING version INTO NEW.row_version;
    RETURN NEW;
END
$$;

CREATE FUNCTION memsieve_bump_old_namespace_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR OLD.namespace IS DISTINCT FROM NEW.namespace THEN
        INSERT INTO namespace_versions AS v (namespace, version) VALUES (OLD.namespace, 1)
        ON CONFLICT (namespace) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER memories_bump_namespace_version ON memories;

CREATE TRIGGER memories_stamp_row_version
    BEFORE INSERT OR UPDATE ON memories
    FOR EACH ROW EXECUTE FUNCTION memsieve_stamp_row_version();

CREATE TRIGGER memories_bump_old_namespace_version
    AFTER UPDATE OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memsieve_bump_old_namespace_version();

CREATE INDEX memories_namespace_row_version ON memories (namespace, row_version);
