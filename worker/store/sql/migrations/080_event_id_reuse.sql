-- An event id used again with another payload (issue 13; since 081 within one
-- namespace, the ledger's key). The later payload is recorded as its own rejected row (reason
-- `event_id_reused`, under an id derived from the reused id and its payload hash) that
-- names the event whose id it reused. Both payload hashes are kept: the original row's
-- and this row's `payload_hash`.
ALTER TABLE events ADD COLUMN reused_id text;
CREATE INDEX events_reused ON events (reused_id) WHERE reused_id IS NOT NULL;
