-- Staging for `memsieve reembed --to MODEL`: vectors of the target embedder, filled in
-- resumable batches, swapped into memories in one transaction (worker/ops/reembed.py).
CREATE TABLE reembed_staging (
    memory_id  uuid NOT NULL REFERENCES memories (id),
    model      text NOT NULL,
    dims       integer NOT NULL CHECK (dims > 0),
    embedding  vector NOT NULL,
    staged_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (memory_id, model)
);
