-- The store's statements, each named once; worker/store/queries.py loads them at import.
-- A name is `-- name: <name>`; comment lines under it say why; placeholders are psycopg's.

-- ======================================================================= locks
-- name: lock_namespace
-- The write path's lock of a namespace (gate writes, reverts, resolutions); one key.
SELECT pg_advisory_xact_lock(hashtextextended('memsieve:ns:' || %s, 0));

-- name: set_now
-- Read by memsieve_now(), the created_at default and the liveness triggers (migration 040).
SELECT set_config('memsieve.now', %s, true);

-- name: now
SELECT memsieve_now() AS now;

-- name: set_close_how
-- Read by the trigger that closes a conflict when one of its members is hidden.
SELECT set_config('memsieve.close_how', %s, true);

-- ======================================================================= migrations
-- name: migrations_lock
-- Serialises concurrent migrators (two workers starting together).
SELECT pg_advisory_xact_lock(%s);

-- name: migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now());

-- name: migrations_done
SELECT version FROM schema_migrations;

-- name: migration_applied
INSERT INTO schema_migrations (version, name) VALUES (%s, %s);

-- ======================================================================= embedder binding
-- name: bind_embedder
INSERT INTO store_meta (key, value) VALUES ('embedder', %s) ON CONFLICT DO NOTHING;

-- name: bound_embedder
SELECT value FROM store_meta WHERE key = 'embedder';

-- name: bound_embedder_for_share
-- Inside a write transaction: a re-embed cut-over (FOR UPDATE on this row) waits for it.
SELECT value FROM store_meta WHERE key = 'embedder' FOR SHARE;

-- name: bound_embedder_for_update
-- The re-embed cut-over: waits for every write transaction in flight (FOR SHARE above)
-- and holds new ones until the switch is committed.
SELECT value FROM store_meta WHERE key = 'embedder' FOR UPDATE;

-- name: rebind_embedder
INSERT INTO store_meta (key, value) VALUES ('embedder', %s)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;

-- ======================================================================= inbox
-- name: insert_event
-- A (namespace, event id) seen before is left alone; finished_at is set for a row that is
-- terminal already (refused at capture).
INSERT INTO events (event_id, namespace, kind, heading, content, tags, occurred_at, agent,
                    session, target_memory, payload_hash, status, reason, detail, reused_id,
                    finished_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
        CASE WHEN %s THEN clock_timestamp() END)
ON CONFLICT (ns_key, event_id) DO NOTHING RETURNING ns_key, event_id;

-- name: payload_hashes
SELECT ns_key, event_id, payload_hash FROM events
 WHERE (ns_key, event_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]));

-- name: first_event_by_id
SELECT * FROM events WHERE event_id = %s ORDER BY received_at LIMIT 1;

-- name: event
-- Event ids are per namespace; '' is the key of rows refused before a namespace was read.
SELECT * FROM events WHERE ns_key = coalesce(%s, '') AND event_id = %s;

-- name: claim_pending
SELECT event_id, namespace, kind, heading, content, tags, occurred_at, agent, session,
       target_memory::text, attempts, claims
  FROM events
 WHERE namespace = %s AND status = 'pending' AND NOT (event_id = ANY(%s))
 ORDER BY received_at, event_id LIMIT %s;

-- name: pending_ahead
-- The events a namespace's next batches will claim: pending, not claimed by a flush now.
SELECT heading, content FROM events
 WHERE namespace = %s AND status = 'pending' AND claims = 0
 ORDER BY received_at, event_id LIMIT %s;

-- name: pending_ids
SELECT event_id FROM events WHERE namespace = %s AND status = 'pending';

-- name: load_pending
-- Loads one pending row the way claim_pending does, to find the rows that cannot be loaded.
SELECT event_id, namespace, kind, heading, content, tags, occurred_at, agent, session,
       target_memory::text
  FROM events WHERE ns_key = %s AND event_id = %s;

-- name: bury_unloadable
-- A date out of the loadable range is moved to the detail (as text), so that the row can
-- be read by `events` and `explain`.
UPDATE events SET status = 'dead', reason = 'unloadable_row',
       detail = %s || coalesce(' (occurred_at was '
                    || (occurred_at AT TIME ZONE 'UTC')::text || ' UTC)', ''),
       occurred_at = CASE WHEN occurred_at BETWEEN %s AND %s THEN occurred_at END,
       updated_at = clock_timestamp(), finished_at = clock_timestamp()
 WHERE ns_key = %s AND event_id = %s AND status = 'pending';

-- name: set_claimed
UPDATE events SET claims = CASE WHEN %s THEN claims + 1 ELSE 0 END
 WHERE ns_key = %s AND event_id = ANY(%s) AND status = 'pending';

-- name: pending_namespaces
SELECT DISTINCT namespace FROM events
 WHERE status = 'pending' AND received_at < clock_timestamp() - make_interval(secs => %s);

-- name: pending_at_least
SELECT count(*) FROM (SELECT 1 FROM events WHERE namespace = %s AND status = 'pending' LIMIT %s) p;

-- name: fail_attempt
-- Events that used up their attempts go dead.
UPDATE events SET attempts = attempts + 1, updated_at = clock_timestamp(), detail = %(detail)s,
       status = CASE WHEN attempts + 1 >= %(max)s THEN 'dead' ELSE status END,
       reason = CASE WHEN attempts + 1 >= %(max)s THEN 'retries_exhausted' ELSE reason END,
       finished_at = CASE WHEN attempts + 1 >= %(max)s THEN clock_timestamp() END
 WHERE ns_key = %(ns)s AND event_id = ANY(%(ids)s) AND status = 'pending'
RETURNING event_id, status;

-- name: finish_pending
-- A pending event ends dead or rejected at flush time, with a reason.
UPDATE events SET status = %s, reason = %s, detail = %s,
       updated_at = clock_timestamp(), finished_at = clock_timestamp()
 WHERE ns_key = %s AND event_id = %s AND status = 'pending';

-- name: retarget
UPDATE events SET target_memory = %s, updated_at = clock_timestamp()
 WHERE ns_key = %s AND event_id = %s AND status = 'pending';

-- name: live_successors
-- For each memory id of the namespace: itself if live, else the live end of its chain.
WITH RECURSIVE chain(start, id, dead, depth) AS (
    SELECT m.id, m.id, m.deleted_at IS NOT NULL, 0 FROM memories m
     WHERE m.id = ANY(%s::uuid[]) AND m.namespace = %s
    UNION ALL
    SELECT c.start, n.id, n.deleted_at IS NOT NULL, c.depth + 1
      FROM chain c JOIN memories n ON n.supersedes = c.id
     WHERE c.dead AND c.depth < 100000)
SELECT start::text, id::text FROM chain WHERE NOT dead;

-- ======================================================================= embedding cache
-- name: cache_get
SELECT content_hash, embedding FROM embedding_cache
 WHERE model = %s AND content_hash = ANY(%s);

-- name: cache_has
SELECT content_hash FROM embedding_cache WHERE model = %s AND content_hash = ANY(%s);

-- name: cache_put
-- Binary vectors (%b): the text form formats 1,536 floats per row in Python.
INSERT INTO embedding_cache (model, content_hash, embedding) VALUES (%s, %s, %b)
    ON CONFLICT DO NOTHING;

-- ======================================================================= recall
-- name: recall
-- The k nearest live memories of a namespace and model (the HNSW index's order).
SELECT id::text AS memory_id, kind, heading, content, tags, created_at,
       (embedding <=> %(v)s)::float8 AS distance
  FROM memories
 WHERE namespace = %(ns)s AND deleted_at IS NULL AND embedding_model = %(model)s
 ORDER BY embedding <=> %(v)s LIMIT %(k)s;

-- name: recall_open_conflicts
SELECT id, older_id::text AS older_id, newer_id::text AS newer_id, detail
  FROM memory_conflicts
 WHERE closed_at IS NULL AND (older_id = ANY(%(ids)s::uuid[]) OR newer_id = ANY(%(ids)s::uuid[]))
 ORDER BY opened_at, id;

-- name: recall_by_ids
-- The newer members of open conflicts that recall brings in beside the memory they update.
SELECT id::text AS memory_id, kind, heading, content, tags, created_at,
       (embedding <=> %(v)s)::float8 AS distance
  FROM memories
 WHERE id = ANY(%(ids)s::uuid[]) AND deleted_at IS NULL AND embedding_model = %(model)s;

-- name: recall_conflicts_as_of
-- The conflicts open at T: opened by then, both members live then (a conflict is open exactly
-- while both members are live: the trigger of migration 100 closes and reopens it).
SELECT c.id, c.older_id::text AS older_id, c.newer_id::text AS newer_id, c.detail
  FROM memory_conflicts c
 WHERE c.opened_at <= %(t)s
   AND (c.older_id = ANY(%(ids)s::uuid[]) OR c.newer_id = ANY(%(ids)s::uuid[]))
   AND EXISTS (SELECT 1 FROM memory_liveness l WHERE l.memory_id = c.older_id
                  AND l.live_from <= %(t)s AND (l.live_to IS NULL OR l.live_to > %(t)s))
   AND EXISTS (SELECT 1 FROM memory_liveness l WHERE l.memory_id = c.newer_id
                  AND l.live_from <= %(t)s AND (l.live_to IS NULL OR l.live_to > %(t)s))
 ORDER BY c.opened_at, c.id;

-- name: recall_by_ids_as_of
SELECT m.id::text AS memory_id, m.kind, m.heading, m.content, m.tags, m.created_at,
       l.live_from, l.live_to, (m.embedding <=> %(v)s)::float8 AS distance
  FROM memories m JOIN memory_liveness l ON l.memory_id = m.id
 WHERE m.id = ANY(%(ids)s::uuid[]) AND m.embedding_model = %(model)s
   AND l.live_from <= %(t)s AND (l.live_to IS NULL OR l.live_to > %(t)s);

-- name: get_memory
SELECT id::text AS memory_id, namespace, kind, heading, content, tags, content_hash,
       embedding_model, embedding_dims, supersedes::text AS supersedes, event_id, created_at,
       deleted_at, decision
  FROM memories WHERE id = %s;

-- name: recall_as_of
-- Live at T means inside a liveness interval: live_from <= T < live_to (exact scan).
SELECT m.id::text AS memory_id, m.kind, m.heading, m.content, m.tags, m.created_at,
       l.live_from, l.live_to, (m.embedding <=> %(v)s)::float8 AS distance
  FROM memories m JOIN memory_liveness l ON l.memory_id = m.id
 WHERE m.namespace = %(ns)s AND m.embedding_model = %(model)s
   AND l.live_from <= %(t)s AND (l.live_to IS NULL OR l.live_to > %(t)s)
 ORDER BY m.embedding <=> %(v)s, m.id LIMIT %(k)s;

-- name: live_as_of
SELECT m.id::text AS memory_id, m.kind, m.heading, m.content, m.created_at
  FROM memories m JOIN memory_liveness l ON l.memory_id = m.id
 WHERE m.namespace = %(ns)s AND l.live_from <= %(t)s
   AND (l.live_to IS NULL OR l.live_to > %(t)s)
 ORDER BY m.created_at, m.id;

-- ======================================================================= history
-- name: lineage_component
-- Every memory connected to one by supersede links, ever (reverted links included).
WITH RECURSIVE comp(id) AS (
    SELECT %(id)s::uuid
    UNION
    SELECT CASE WHEN r.newer_id = c.id THEN r.older_id ELSE r.newer_id END
      FROM memory_revisions r JOIN comp c ON r.newer_id = c.id OR r.older_id = c.id
     WHERE r.kind = 'supersede'
)
SELECT m.id::text AS memory_id, m.namespace, m.kind, m.heading, m.content, m.created_at,
       m.deleted_at, m.event_id, m.agent, m.decision
  FROM memories m JOIN comp ON m.id = comp.id
 ORDER BY m.created_at, m.id;

-- name: lineage_steps
SELECT id AS revision, kind, newer_id::text, older_id::text, at, actor, reason, event_id, undoes
  FROM memory_revisions WHERE newer_id = ANY(%s::uuid[]) ORDER BY at, id;

-- name: lineage_intervals
SELECT memory_id::text, live_from, live_to FROM memory_liveness
 WHERE memory_id = ANY(%s::uuid[]) ORDER BY live_from;

-- name: lineage_conflicts
SELECT id, older_id::text, newer_id::text, judge, detail, opened_at, closed_at, closed_how,
       loser_id::text
  FROM memory_conflicts
 WHERE older_id = ANY(%(ids)s::uuid[]) OR newer_id = ANY(%(ids)s::uuid[])
 ORDER BY opened_at, id;

-- name: explain_memory
SELECT id::text AS memory_id, namespace, kind, heading, content, created_at, deleted_at,
       event_id, agent, embedding_model, decision
  FROM memories WHERE id = %s;

-- name: merged_into
-- The later events that carried exactly a memory's text and were merged into it.
SELECT event_id, kind, agent, finished_at FROM events
 WHERE memory_id = %s AND decision = 'merged' ORDER BY finished_at, event_id;

-- name: event_namespaces
-- The namespace keys ('' for rows refused before a namespace was read) using an event id.
SELECT DISTINCT ns_key FROM events WHERE event_id = %s ORDER BY ns_key;

-- name: event_namespaces_among
SELECT DISTINCT ns_key FROM events WHERE event_id = %s AND ns_key = ANY(%s) ORDER BY ns_key;

-- name: memory_namespace
SELECT namespace FROM memories WHERE id = %s;

-- name: revision_link
SELECT namespace, newer_id::text FROM memory_revisions WHERE id = %s;

-- ======================================================================= revert
-- name: revert_steps
SELECT id, kind, older_id::text, at FROM memory_revisions WHERE newer_id = %s ORDER BY id;

-- name: lock_pair
-- The two rows of a link, locked in id order (two reverts cannot deadlock).
SELECT id::text AS memory_id, heading, content, content_hash, deleted_at,
       supersedes::text AS supersedes
  FROM memories WHERE id = ANY(%s::uuid[]) ORDER BY id FOR UPDATE;

-- name: live_twin
SELECT id::text, created_at FROM memories
 WHERE namespace = %s AND content_hash = %s AND deleted_at IS NULL;

-- name: unlink
UPDATE memories SET supersedes = NULL WHERE id = %s AND supersedes = %s;

-- name: revive
UPDATE memories SET deleted_at = NULL WHERE id = %s AND deleted_at IS NOT NULL;

-- name: hider_of
SELECT id::text FROM memories WHERE supersedes = %s;

-- name: hide
-- The soft delete: touches exactly one row or none (a chain never forks).
UPDATE memories SET deleted_at = %s WHERE id = %s AND deleted_at IS NULL;

-- name: relink
UPDATE memories SET supersedes = %s WHERE id = %s AND supersedes IS NULL;

-- name: record_revision
INSERT INTO memory_revisions (kind, namespace, newer_id, older_id, at, actor, reason, undoes)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id;

-- ======================================================================= conflicts
-- name: conflicts
-- Conflicts with both members' text, oldest first, filtered by whichever of id, ids
-- (either member among them), ns and open_only is given.
SELECT c.id, c.namespace, c.older_id::text AS older_id, c.newer_id::text AS newer_id,
       c.event_id, c.verdict, c.judge, c.score, c.detail, c.distance, c.opened_at,
       c.closed_at, c.closed_how, c.loser_id::text AS loser_id, c.closed_by, c.note,
       o.heading AS older_heading, o.content AS older_content,
       n.heading AS newer_heading, n.content AS newer_content
  FROM memory_conflicts c JOIN memories o ON o.id = c.older_id
  JOIN memories n ON n.id = c.newer_id
 WHERE (%(id)s::bigint IS NULL OR c.id = %(id)s::bigint)
   AND (%(ids)s::uuid[] IS NULL
        OR c.older_id = ANY(%(ids)s::uuid[]) OR c.newer_id = ANY(%(ids)s::uuid[]))
   AND (%(ns)s::text IS NULL OR c.namespace = %(ns)s::text)
   AND (NOT %(open_only)s::boolean OR c.closed_at IS NULL)
 ORDER BY c.opened_at, c.id;

-- name: conflict_namespace
SELECT namespace FROM memory_conflicts WHERE id = %s;

-- name: lock_conflict
SELECT id, older_id::text AS older_id, newer_id::text AS newer_id, closed_at, closed_how
  FROM memory_conflicts WHERE id = %s FOR UPDATE;

-- name: lock_members
SELECT id::text AS id, heading, content, supersedes::text AS supersedes, deleted_at
  FROM memories WHERE id = ANY(%s::uuid[]) ORDER BY id FOR UPDATE;

-- name: superseded_once
-- A memory replaces at most one other: has this one ever superseded?
SELECT 1 FROM memory_revisions WHERE newer_id = %s AND kind = 'supersede';

-- name: link
UPDATE memories SET supersedes = %s WHERE id = %s;

-- name: close_conflict
UPDATE memory_conflicts SET closed_by = %s, note = %s WHERE id = %s;

-- name: record_resolution
INSERT INTO memory_revisions (kind, namespace, newer_id, older_id, at, actor, reason)
VALUES ('supersede', %s, %s, %s, %s, %s, 'update') RETURNING id;

-- name: memory_open_conflicts
SELECT id AS conflict_id, older_id::text AS older_id, newer_id::text AS newer_id, detail
  FROM memory_conflicts
 WHERE closed_at IS NULL AND (older_id = %(id)s OR newer_id = %(id)s)
 ORDER BY opened_at, id;

-- name: has_conflicts_table
SELECT to_regclass('memory_conflicts') IS NOT NULL AS ok;

-- ======================================================================= ledger reads
-- name: events_list
-- `memsieve events`: each filter applies when its parameter is not NULL; an event id also
-- finds the rows of later payloads that reused it (reason event_id_reused).
SELECT event_id, namespace, kind, status, decision, reason, detail, memory_id::text,
       distance, attempts, received_at, finished_at
  FROM events
 WHERE (%(ns)s::text IS NULL OR namespace = %(ns)s)
   AND (%(status)s::text IS NULL OR status = %(status)s)
   AND (%(eid)s::text IS NULL OR event_id = %(eid)s OR reused_id = %(eid)s)
 ORDER BY received_at DESC, event_id LIMIT %(limit)s;

-- name: event_stats
SELECT coalesce(namespace, '-') AS namespace, status,
       coalesce(decision, reason, '-') AS outcome, count(*)::int AS n
  FROM events GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

-- name: memory_stats
SELECT m.namespace, count(*) FILTER (WHERE m.deleted_at IS NULL)::int AS live,
       count(*)::int AS total, coalesce(max(c.n), 0)::int AS open_conflicts
  FROM memories m
  LEFT JOIN (SELECT namespace, count(*) AS n FROM memory_conflicts
              WHERE closed_at IS NULL GROUP BY 1) c ON c.namespace = m.namespace
 GROUP BY 1 ORDER BY 1;

-- name: ledger_rows
SELECT ns_key, event_id, status, decision, reason, payload_hash FROM events
 WHERE (ns_key, event_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]));

-- name: ledger_outcomes
-- The rows an MCP call waits on: its event id (and the id it reused) in its namespace.
SELECT event_id, status, decision, reason, detail, reused_id, memory_id::text AS memory_id,
       supersedes::text AS supersedes, payload_hash
  FROM events WHERE ns_key = %s AND event_id = ANY(%s);

-- name: inbox_depth
-- Per scrape: the pending events of each namespace and the age of the oldest.
SELECT namespace, count(*), extract(epoch FROM clock_timestamp() - min(received_at))::float8
  FROM events WHERE status = 'pending' GROUP BY namespace;

-- ======================================================================= reembed
-- name: reembed_todo
SELECT m.id::text, m.heading, m.content, m.content_hash FROM memories m
 WHERE NOT EXISTS (SELECT 1 FROM reembed_staging s WHERE s.memory_id = m.id AND s.model = %s)
   AND NOT (m.id::text = ANY(%s))
 ORDER BY m.id LIMIT %s;

-- name: reembed_stage
INSERT INTO reembed_staging (memory_id, model, dims, embedding) VALUES (%s, %s, %s, %s)
    ON CONFLICT (memory_id, model) DO NOTHING;

-- name: memory_count
SELECT count(*) FROM memories;

-- name: reembed_staged_count
SELECT count(*) FROM reembed_staging s JOIN memories m ON m.id = s.memory_id WHERE s.model = %s;

-- name: reembed_switch
UPDATE memories m SET embedding = s.embedding, embedding_model = s.model,
       embedding_dims = s.dims
  FROM reembed_staging s WHERE s.memory_id = m.id AND s.model = %s;

-- name: reembed_clear
DELETE FROM reembed_staging WHERE model = %s;

-- ======================================================================= the gate's write
-- (worker/store/gate_write.py: statements run inside write_batch's transaction)

-- name: lock_batch_events
-- The batch's ledger rows, locked in id order: a redelivered event already written is skipped.
SELECT event_id, status, memory_id::text FROM events
 WHERE ns_key = %s AND event_id = ANY(%s) ORDER BY event_id FOR UPDATE;

-- name: namespace_version
SELECT version FROM namespace_versions WHERE namespace = %s;

-- name: live_rows
-- The namespace's live rows in this model's vector space (loaded binary).
SELECT id::text, kind, heading, content, content_hash, embedding FROM memories
 WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s;

-- name: changed_rows
-- The namespace's rows changed in (since, now] by row_version (migration 110), live or
-- not, with their model: gate_load.refresh brings a cached live set up to date with them.
SELECT id::text, kind, heading, content, content_hash, embedding,
       deleted_at IS NULL, embedding_model FROM memories
 WHERE namespace = %s AND row_version > %s AND row_version <= %s;

-- name: count_live
-- Whether a namespace fits the gate's cache (gate_load.fits): an index-only scan of
-- memories_live_ns.
SELECT count(*) FROM memories
 WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s;

-- name: outside_target
-- A live row a correction names that lies outside this model's vector space.
SELECT id::text, kind, heading, content, content_hash, (embedding <=> %b)::float8
  FROM memories WHERE id = %s AND namespace = %s AND deleted_at IS NULL;

-- name: open_conflict_members
SELECT older_id::text FROM memory_conflicts WHERE namespace = %s AND closed_at IS NULL
UNION
SELECT newer_id::text FROM memory_conflicts WHERE namespace = %s AND closed_at IS NULL;

-- name: insert_memory
INSERT INTO memories (id, namespace, kind, heading, content, tags, content_hash, embedding,
                      embedding_model, embedding_dims, supersedes, event_id, agent, session,
                      occurred_at, decision)
VALUES (%s, %s, %s, %s, %s, %s, %s, %b, %s, %s, %s, %s, %s, %s, %s, %s);

-- name: open_conflict
-- The new row's created_at is the conflict's opening time.
INSERT INTO memory_conflicts (namespace, older_id, newer_id, event_id, verdict, judge, score,
                              detail, distance, opened_at)
SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, created_at FROM memories WHERE id = %s;

-- name: hide_superseded
-- The soft delete of each row a new version supersedes, at the new row's created_at; the
-- caller checks that it touched exactly one row per new version (invariant 2).
UPDATE memories m SET deleted_at = n.created_at FROM memories n
 WHERE n.id = ANY(%s::uuid[]) AND m.id = n.supersedes AND m.deleted_at IS NULL
RETURNING m.id;

-- name: finish_event
UPDATE events SET status = 'written', decision = %s, memory_id = %s, supersedes = %s,
       distance = %s, reason = %s, decision_record = %s, updated_at = clock_timestamp(),
       finished_at = clock_timestamp()
 WHERE ns_key = %s AND event_id = %s;

-- ======================================================================= the gate's SQL search
-- (worker/store/gate_sql.py: MEMSIEVE_GATE_SEARCH=sql, loaded binary)

-- name: live_twins
-- Live rows byte-identical to one of the batch's events.
SELECT id::text, kind, heading, content, content_hash, embedding FROM memories
 WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s
   AND content_hash = ANY(%s);

-- name: nearest_live
-- One event's k nearest live rows of the namespace and model (exact, ordered by <=>).
SELECT id::text, kind, heading, content, content_hash, embedding FROM memories
 WHERE namespace = %s AND deleted_at IS NULL AND embedding_model = %s
 ORDER BY embedding <=> %b LIMIT %s;
