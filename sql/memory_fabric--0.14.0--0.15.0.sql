-- memory_fabric 0.14.0 → 0.15.0: promote() no longer searches a scope again when memories were
-- only inserted into it since the candidate's review.
-- * memory_fabric.scope_versions remembers each scope's last 16 changes: the version each
--   followed and the promoted memories it inserted (none known for an update, or for more than
--   16 memories at once).
-- * promote() reads the memories inserted since its review's version with the memories the
--   review compared, and decides on what the search would find among them; anything else
--   changed since makes it review again in full, as before.
-- Scopes changed before the update have no changes remembered: their reviews are decided as
-- before until the scope changes again.
-- * promoted_scope_sq8 is keyed by the hash of the scope (memory_fabric._scope_key(), a uuid:
--   128 bits of SHA-256) instead of its tenant, user and intent: a scan compares one uuid at each
--   entry instead of three texts. Building the index reads every promoted memory once.
-- Its statements are the install script's own; tests/upgrade/run.sh checks that it ends with the
-- catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.15.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

ALTER TABLE memory_fabric.scope_versions ADD COLUMN changes jsonb NOT NULL DEFAULT '[]';
COMMENT ON TABLE memory_fabric.scope_versions IS
    'The version of each scope''s promoted memories, new at every change, and its last changes; no role reads or writes it';
CREATE OR REPLACE FUNCTION memory_fabric._scope_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- in key order, so that two statements changing the same scopes lock their rows alike
    INSERT INTO memory_fabric.scope_versions AS v (key, version, changes)
    SELECT s.key, pg_catalog.gen_random_uuid(),
           pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('from', NULL, 'ids',
               CASE WHEN TG_OP = 'INSERT' AND s.n <= 16 THEN pg_catalog.to_jsonb(s.ids) END))
    FROM (SELECT pg_catalog.hashtextextended('scope:' || n.tenant_id || ':' || coalesce(n.user_id, ''), 0) AS key,
                 pg_catalog.array_agg(n.id ORDER BY n.id) AS ids, count(*) AS n
          FROM changed n GROUP BY 1) s
    ORDER BY s.key
    ON CONFLICT (key) DO UPDATE SET version = excluded.version,
        changes = (SELECT coalesce(pg_catalog.jsonb_agg(a.e ORDER BY a.i), '[]')
                   FROM pg_catalog.jsonb_array_elements(v.changes || pg_catalog.jsonb_build_array(
                            pg_catalog.jsonb_build_object('from', v.version, 'ids', excluded.changes -> 0 -> 'ids')))
                        WITH ORDINALITY a(e, i)
                   WHERE a.i > pg_catalog.jsonb_array_length(v.changes) + 1 - 16);
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_fabric."_scope_key"(
	"tenant_id" TEXT, /* Option < & str > */
	"user_id" TEXT, /* Option < & str > */
	"intent_scope" TEXT /* Option < & str > */
) RETURNS uuid /* Option < pgrx :: Uuid > */
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_scope_key_wrapper';
REVOKE ALL ON FUNCTION memory_fabric._scope_key FROM PUBLIC;

DROP INDEX memory_fabric.promoted_scope_sq8;
-- The scopes of the promoted memories whose values fit a btree entry (_scope_fits; sql/schema.sql),
-- with each embedding quantised to a byte a dimension and the bounds of its rounding
-- (_embedding_sq8) instead of four bytes a dimension. Recall with a query vector
-- (_recall_candidates(), src/api/recall.rs) and review's exact search (_nearest_candidates(),
-- src/pipeline/review.rs) read a scope's entries and bound every memory's similarity, then read
-- only the memories that could be among their results by id. Keyed by the hash of the scope
-- (_scope_key: a tenant, a user, an intent; 128 bits of SHA-256, which no two scopes share), a
-- uuid that the scan compares at each entry instead of three texts (src/scope_scan.rs). Here
-- rather than in sql/schema.sql because its key calls functions of this library, created after
-- schema.sql.
CREATE INDEX promoted_scope_sq8 ON memory_fabric.promoted_memory
    (memory_fabric._scope_key(tenant_id, user_id, intent_scope), embedding_model,
     memory_fabric._embedding_sq8(embedding::real[]))
    INCLUDE (retracted_at, expires_at, promoted_at, classification, consent_id, priority, id)
    WHERE memory_fabric._scope_fits(tenant_id, user_id, intent_scope, embedding_model, id, classification,
                                    consent_id, embedding);
