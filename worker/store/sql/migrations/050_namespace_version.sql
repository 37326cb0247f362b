-- A version per namespace, bumped by every change to its memories (issue 9).
--
-- Workers keep a namespace's live vectors in memory (worker/gate/vectors.py) so the gate's
-- nearest-neighbour search is a matrix product instead of an exact scan through TOAST.
-- A cached set is trusted only while its version equals this row's. The trigger catches
-- every writer (the gate, revert, re-embed, a person with psql). A gate batch reads the
-- version before it searches and again after its writes (which hold the row's lock until
-- commit); if the difference is not exactly its own row changes, another writer got in
-- between and the worker drops its copy instead of caching it.
CREATE TABLE namespace_versions (
    namespace text PRIMARY KEY,
    version   bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION memsieve_bump_namespace_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.namespace IS DISTINCT FROM NEW.namespace) THEN
        INSERT INTO namespace_versions AS v (namespace, version) VALUES (OLD.namespace, 1)
        ON CONFLICT (namespace) DO UPDATE SET version = v.version + 1;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO namespace_versions AS v (namespace, version) VALUES (NEW.namespace, 1)
        ON CONFLICT (namespace) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_bump_namespace_version
    AFTER INSERT OR UPDATE OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memsieve_bump_namespace_version();

INSERT INTO namespace_versions (namespace, version)
SELECT DISTINCT namespace, 1 FROM memories;
