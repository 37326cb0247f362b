-- memsieve store: memories with their supersede chain, the capture inbox/ledger,
-- the embedding cache, and which embedder the store is bound to.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE store_meta (
    key   text PRIMARY KEY,
    value jsonb NOT NULL
);

CREATE TABLE memories (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    namespace       text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('retro', 'correction', 'failure', 'pattern')),
    heading         text NOT NULL,
    content         text NOT NULL,
    tags            text[] NOT NULL DEFAULT '{}',
    content_hash    text NOT NULL,
    embedding       vector NOT NULL,
    embedding_model text NOT NULL,
    embedding_dims  integer NOT NULL CHECK (embedding_dims > 0),
    -- the row this one replaced; unique, so a chain can never fork
    supersedes      uuid UNIQUE REFERENCES memories (id),
    event_id        text NOT NULL,
    agent           text,
    session         text,
    occurred_at     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    deleted_at      timestamptz,
    -- the decision record: candidates, distances, threshold, guards, embedder
    decision        jsonb NOT NULL DEFAULT '{}',
    CHECK (deleted_at IS NULL OR deleted_at >= created_at),
    CHECK (supersedes IS NULL OR supersedes <> id)
);

-- Invariant 1: at most one live row per (namespace, content_hash).
CREATE UNIQUE INDEX memories_live_hash ON memories (namespace, content_hash)
    WHERE deleted_at IS NULL;
-- The gate's and recall's filter: live rows of one namespace and one vector space.
CREATE INDEX memories_live_ns ON memories (namespace, embedding_model)
    WHERE deleted_at IS NULL;
CREATE INDEX memories_event ON memories (event_id);
-- as-of queries
CREATE INDEX memories_ns_created ON memories (namespace, created_at);

-- The durable inbox and ledger: every capture event ends written, rejected or dead.
CREATE TABLE events (
    event_id        text PRIMARY KEY,
    namespace       text,
    kind            text,
    heading         text,
    content         text,
    tags            text[] NOT NULL DEFAULT '{}',
    occurred_at     timestamptz,
    agent           text,
    session         text,
    target_memory   uuid,
    payload_hash    text NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'written', 'rejected', 'dead')),
    decision        text CHECK (decision IN ('inserted', 'superseded', 'merged')),
    reason          text,
    detail          text,
    memory_id       uuid,
    supersedes      uuid,
    distance        double precision,
    attempts        integer NOT NULL DEFAULT 0,
    received_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at     timestamptz,
    CHECK ((status = 'written') = (decision IS NOT NULL)),
    CHECK (status = 'pending' OR finished_at IS NOT NULL)
);

CREATE INDEX events_pending ON events (namespace, received_at) WHERE status = 'pending';
CREATE INDEX events_ns_status ON events (namespace, status);

-- Never pay twice: vectors by (model, content hash).
CREATE TABLE embedding_cache (
    model        text NOT NULL,
    content_hash text NOT NULL,
    embedding    vector NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (model, content_hash)
);
