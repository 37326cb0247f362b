-- Idempotency keyed by (namespace, event_id) (issue 13): two tenants may use the same
-- event id; each id is one event within its namespace. Rows without a namespace (items
-- refused before one could be read) share the empty key.
ALTER TABLE events ADD COLUMN ns_key text GENERATED ALWAYS AS (coalesce(namespace, '')) STORED;
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (ns_key, event_id);
CREATE INDEX events_event_id ON events (event_id);
