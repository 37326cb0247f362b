CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;

COMMENT ON EXTENSION vector IS 'vector data type and ivfflat and hnsw access methods';

CREATE FUNCTION public.memsieve_bump_namespace_version() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

CREATE FUNCTION public.memsieve_bump_old_namespace_version() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'DELETE' OR OLD.namespace IS DISTINCT FROM NEW.namespace THEN
        INSERT INTO namespace_versions AS v (namespace, version) VALUES (OLD.namespace, 1)
        ON CONFLICT (namespace) DO UPDATE SET version = v.version + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION public.memsieve_now() RETURNS timestamp with time zone
    LANGUAGE sql
    AS $$
    SELECT coalesce(nullif(current_setting('memsieve.now', true), '')::timestamptz,
                    clock_timestamp())
$$;

CREATE FUNCTION public.memsieve_stamp_row_version() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO namespace_versions AS v (namespace, version) VALUES (NEW.namespace, 1)
    ON CONFLICT (namespace) DO UPDATE SET version = v.version + 1
    RETURNING version INTO NEW.row_version;
    RETURN NEW;
END
$$;

CREATE FUNCTION public.memsieve_track_conflicts() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

CREATE FUNCTION public.memsieve_track_liveness() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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

CREATE TABLE public.embedding_cache (
    model text NOT NULL,
    content_hash text NOT NULL,
    embedding public.vector NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.events (
    event_id text NOT NULL,
    namespace text,
    kind text,
    heading text,
    content text,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    occurred_at timestamp with time zone,
    agent text,
    session text,
    target_memory uuid,
    payload_hash text NOT NULL,
    status text NOT NULL,
    decision text,
    reason text,
    detail text,
    memory_id uuid,
    supersedes uuid,
    distance double precision,
    attempts integer DEFAULT 0 NOT NULL,
    received_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    updated_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    finished_at timestamp with time zone,
    decision_record jsonb,
    claims integer DEFAULT 0 NOT NULL,
    reused_id text,
    ns_key text GENERATED ALWAYS AS (COALESCE(namespace, ''::text)) STORED NOT NULL,
    CONSTRAINT events_check CHECK (((status = 'written'::text) = (decision IS NOT NULL))),
    CONSTRAINT events_check1 CHECK (((status = 'pending'::text) OR (finished_at IS NOT NULL))),
    CONSTRAINT events_decision_check CHECK ((decision = ANY (ARRAY['inserted'::text, 'superseded'::text, 'merged'::text]))),
    CONSTRAINT events_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'written'::text, 'rejected'::text, 'dead'::text])))
);

CREATE TABLE public.memories (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    namespace text NOT NULL,
    kind text NOT NULL,
    heading text NOT NULL,
    content text NOT NULL,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    content_hash text NOT NULL,
    embedding public.vector NOT NULL,
    embedding_model text NOT NULL,
    embedding_dims integer NOT NULL,
    supersedes uuid,
    event_id text NOT NULL,
    agent text,
    session text,
    occurred_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT public.memsieve_now() NOT NULL,
    deleted_at timestamp with time zone,
    decision jsonb DEFAULT '{}'::jsonb NOT NULL,
    row_version bigint,
    CONSTRAINT memories_check CHECK (((deleted_at IS NULL) OR (deleted_at >= created_at))),
    CONSTRAINT memories_check1 CHECK (((supersedes IS NULL) OR (supersedes <> id))),
    CONSTRAINT memories_embedding_dims_check CHECK ((embedding_dims > 0)),
    CONSTRAINT memories_kind_check CHECK ((kind = ANY (ARRAY['retro'::text, 'correction'::text, 'failure'::text, 'pattern'::text])))
);

CREATE TABLE public.memory_conflicts (
    id bigint NOT NULL,
    namespace text NOT NULL,
    older_id uuid NOT NULL,
    newer_id uuid NOT NULL,
    event_id text,
    verdict text DEFAULT 'update'::text NOT NULL,
    judge text,
    score double precision,
    detail text,
    distance double precision,
    opened_at timestamp with time zone NOT NULL,
    closed_at timestamp with time zone,
    closed_how text,
    loser_id uuid,
    closed_by text,
    note text,
    CONSTRAINT memory_conflicts_check CHECK ((older_id <> newer_id)),
    CONSTRAINT memory_conflicts_check1 CHECK (((closed_at IS NULL) = (closed_how IS NULL))),
    CONSTRAINT memory_conflicts_check2 CHECK (((closed_at IS NULL) = (loser_id IS NULL))),
    CONSTRAINT memory_conflicts_check3 CHECK (((closed_at IS NULL) OR (closed_at >= opened_at))),
    CONSTRAINT memory_conflicts_closed_how_check CHECK ((closed_how = ANY (ARRAY['update'::text, 'resolved'::text, 'superseded'::text])))
);

ALTER TABLE public.memory_conflicts ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.memory_conflicts_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.memory_liveness (
    memory_id uuid NOT NULL,
    live_from timestamp with time zone NOT NULL,
    live_to timestamp with time zone,
    CONSTRAINT memory_liveness_check CHECK (((live_to IS NULL) OR (live_to >= live_from)))
);

CREATE TABLE public.memory_revisions (
    id bigint NOT NULL,
    kind text NOT NULL,
    namespace text NOT NULL,
    newer_id uuid NOT NULL,
    older_id uuid NOT NULL,
    at timestamp with time zone NOT NULL,
    actor text,
    reason text,
    event_id text,
    undoes bigint,
    CONSTRAINT memory_revisions_check CHECK (((kind = 'supersede'::text) = (undoes IS NULL))),
    CONSTRAINT memory_revisions_check1 CHECK ((newer_id <> older_id)),
    CONSTRAINT memory_revisions_kind_check CHECK ((kind = ANY (ARRAY['supersede'::text, 'revert'::text, 'unrevert'::text])))
);

ALTER TABLE public.memory_revisions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.memory_revisions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.namespace_versions (
    namespace text NOT NULL,
    version bigint DEFAULT 0 NOT NULL
);

CREATE TABLE public.reembed_staging (
    memory_id uuid NOT NULL,
    model text NOT NULL,
    dims integer NOT NULL,
    embedding public.vector NOT NULL,
    staged_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT reembed_staging_dims_check CHECK ((dims > 0))
);

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.store_meta (
    key text NOT NULL,
    value jsonb NOT NULL
);

ALTER TABLE ONLY public.embedding_cache
    ADD CONSTRAINT embedding_cache_pkey PRIMARY KEY (model, content_hash);

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (ns_key, event_id);

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_supersedes_key UNIQUE (supersedes);

ALTER TABLE ONLY public.memory_conflicts
    ADD CONSTRAINT memory_conflicts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.memory_liveness
    ADD CONSTRAINT memory_liveness_pkey PRIMARY KEY (memory_id, live_from);

ALTER TABLE ONLY public.memory_revisions
    ADD CONSTRAINT memory_revisions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.namespace_versions
    ADD CONSTRAINT namespace_versions_pkey PRIMARY KEY (namespace);

ALTER TABLE ONLY public.reembed_staging
    ADD CONSTRAINT reembed_staging_pkey PRIMARY KEY (memory_id, model);

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

ALTER TABLE ONLY public.store_meta
    ADD CONSTRAINT store_meta_pkey PRIMARY KEY (key);

CREATE INDEX events_event_id ON public.events USING btree (event_id);

CREATE INDEX events_ns_status ON public.events USING btree (namespace, status);

CREATE INDEX events_pending ON public.events USING btree (namespace, received_at) WHERE (status = 'pending'::text);

CREATE INDEX events_reused ON public.events USING btree (reused_id) WHERE (reused_id IS NOT NULL);

CREATE INDEX memories_event ON public.memories USING btree (event_id);

CREATE UNIQUE INDEX memories_live_hash ON public.memories USING btree (namespace, content_hash) WHERE (deleted_at IS NULL);

CREATE INDEX memories_live_ns ON public.memories USING btree (namespace, embedding_model) WHERE (deleted_at IS NULL);

CREATE INDEX memories_namespace_row_version ON public.memories USING btree (namespace, row_version);

CREATE INDEX memories_ns_created ON public.memories USING btree (namespace, created_at);

CREATE INDEX memory_conflicts_loser ON public.memory_conflicts USING btree (loser_id);

CREATE INDEX memory_conflicts_newer ON public.memory_conflicts USING btree (newer_id);

CREATE INDEX memory_conflicts_older ON public.memory_conflicts USING btree (older_id);

CREATE INDEX memory_conflicts_open ON public.memory_conflicts USING btree (namespace, opened_at) WHERE (closed_at IS NULL);

CREATE UNIQUE INDEX memory_conflicts_pair ON public.memory_conflicts USING btree (older_id, newer_id);

CREATE INDEX memory_liveness_from ON public.memory_liveness USING btree (live_from);

CREATE UNIQUE INDEX memory_liveness_open ON public.memory_liveness USING btree (memory_id) WHERE (live_to IS NULL);

CREATE UNIQUE INDEX memory_revisions_link ON public.memory_revisions USING btree (newer_id) WHERE (kind = 'supersede'::text);

CREATE INDEX memory_revisions_older ON public.memory_revisions USING btree (older_id);

CREATE UNIQUE INDEX memory_revisions_undoes ON public.memory_revisions USING btree (undoes);

CREATE TRIGGER memories_bump_old_namespace_version AFTER DELETE OR UPDATE ON public.memories FOR EACH ROW EXECUTE FUNCTION public.memsieve_bump_old_namespace_version();

CREATE TRIGGER memories_stamp_row_version BEFORE INSERT OR UPDATE ON public.memories FOR EACH ROW EXECUTE FUNCTION public.memsieve_stamp_row_version();

CREATE TRIGGER memories_track_conflicts AFTER UPDATE OF deleted_at ON public.memories FOR EACH ROW EXECUTE FUNCTION public.memsieve_track_conflicts();

CREATE TRIGGER memories_track_liveness AFTER INSERT OR UPDATE OF deleted_at ON public.memories FOR EACH ROW EXECUTE FUNCTION public.memsieve_track_liveness();

ALTER TABLE ONLY public.memories
    ADD CONSTRAINT memories_supersedes_fkey FOREIGN KEY (supersedes) REFERENCES public.memories(id);

ALTER TABLE ONLY public.memory_conflicts
    ADD CONSTRAINT memory_conflicts_loser_id_fkey FOREIGN KEY (loser_id) REFERENCES public.memories(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memory_conflicts
    ADD CONSTRAINT memory_conflicts_newer_id_fkey FOREIGN KEY (newer_id) REFERENCES public.memories(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memory_conflicts
    ADD CONSTRAINT memory_conflicts_older_id_fkey FOREIGN KEY (older_id) REFERENCES public.memories(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memory_liveness
    ADD CONSTRAINT memory_liveness_memory_id_fkey FOREIGN KEY (memory_id) REFERENCES public.memories(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memory_revisions
    ADD CONSTRAINT memory_revisions_newer_id_fkey FOREIGN KEY (newer_id) REFERENCES public.memories(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memory_revisions
    ADD CONSTRAINT memory_revisions_older_id_fkey FOREIGN KEY (older_id) REFERENCES public.memories(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memory_revisions
    ADD CONSTRAINT memory_revisions_undoes_fkey FOREIGN KEY (undoes) REFERENCES public.memory_revisions(id);

ALTER TABLE ONLY public.reembed_staging
    ADD CONSTRAINT reembed_staging_memory_id_fkey FOREIGN KEY (memory_id) REFERENCES public.memories(id);
