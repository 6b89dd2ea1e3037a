-- memory_fabric 0.12.0 → 0.13.0: cheaper promotions and reviews.
-- * No embedding model has a nearest-neighbour (HNSW) index by default. Review ranks a scope of
--   more than 2000 rows by the quantised embeddings, whatever its size, unless the model has an
--   index made by memory_fabric.create_embedding_index() and the scope is above
--   memory_fabric.exact_search_limit. The built-in models' indexes go: every promotion of their
--   vectors paid for an insert into the graph.
-- * promote() decides again on the memories its review compared while the scope is unchanged.
-- * Review reads retracted memories index-only.
-- Written by hand; tests/upgrade/run.sh checks that it ends with the catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.13.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

-- To keep the index of a built-in model, call after the update, as the extension's owner or a
-- superuser:
--   SELECT memory_fabric.create_embedding_index('memory_fabric/hash-384-v1', 384);
--   SELECT memory_fabric.create_embedding_index('sentence-transformers/all-MiniLM-L6-v2', 384);
DROP INDEX IF EXISTS memory_fabric.promoted_builtin_hnsw;
DROP INDEX IF EXISTS memory_fabric.promoted_semantic_hnsw;

-- promote() decides again on the memories its review compared while nothing in the scope has
-- changed since, instead of searching the scope again: reviews record the scope's version and
-- those memories, and every statement that changes promoted memories gives their scopes a new
-- version. Reviews recorded before this update have none and are decided again in full.
ALTER TABLE memory_fabric.reviews ADD COLUMN scope_version uuid, ADD COLUMN neighbour_ids text[],
    ADD COLUMN retracted_ids text[];
COMMENT ON COLUMN memory_fabric.reviews.scope_version IS
    'The version of the scope''s promoted memories the verdict was decided on (memory_fabric.scope_versions)';
COMMENT ON COLUMN memory_fabric.reviews.neighbour_ids IS 'The live promoted memories the candidate was compared with';
COMMENT ON COLUMN memory_fabric.reviews.retracted_ids IS 'The retracted memories the candidate was compared with';

CREATE TABLE memory_fabric.scope_versions (key bigint PRIMARY KEY, version uuid NOT NULL);
COMMENT ON TABLE memory_fabric.scope_versions IS
    'The version of each scope''s promoted memories, new at every change; no role reads or writes it';
REVOKE ALL ON memory_fabric.scope_versions FROM PUBLIC;
ALTER TABLE memory_fabric.scope_versions ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE FUNCTION memory_fabric._scope_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- in key order, so that two statements changing the same scopes lock their rows alike
    INSERT INTO memory_fabric.scope_versions AS v (key, version)
    SELECT s.key, pg_catalog.gen_random_uuid()
    FROM (SELECT DISTINCT pg_catalog.hashtextextended('scope:' || n.tenant_id || ':' || coalesce(n.user_id, ''), 0) AS key
          FROM changed n) s
    ORDER BY s.key
    ON CONFLICT (key) DO UPDATE SET version = excluded.version;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION memory_fabric._scope_changed() FROM PUBLIC;
CREATE TRIGGER scope_changed_insert AFTER INSERT ON memory_fabric.promoted_memory
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION memory_fabric._scope_changed();
CREATE TRIGGER scope_changed_update AFTER UPDATE ON memory_fabric.promoted_memory
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION memory_fabric._scope_changed();
ALTER TABLE memory_fabric.promoted_memory ENABLE ALWAYS TRIGGER scope_changed_insert,
    ENABLE ALWAYS TRIGGER scope_changed_update;

-- Review reads the retracted memories of a tenant and user index-only: promoted_retracted holds
-- what it compares, the embedding included, for the rows whose values fit a btree entry, and
-- promoted_retracted_wide keys the rest. Both hold only retracted, unerased rows.
DROP INDEX memory_fabric.promoted_retracted;
CREATE INDEX promoted_retracted ON memory_fabric.promoted_memory (tenant_id, user_id)
    INCLUDE (content_hash, embedding_model, id, embedding)
    WHERE retracted_at IS NOT NULL AND erased_at IS NULL
      AND memory_fabric._scope_fits(tenant_id, user_id, content_hash, embedding_model, id, '', NULL, embedding);
CREATE INDEX promoted_retracted_wide ON memory_fabric.promoted_memory (tenant_id, user_id)
    WHERE retracted_at IS NOT NULL AND erased_at IS NULL
      AND NOT memory_fabric._scope_fits(tenant_id, user_id, content_hash, embedding_model, id, '', NULL, embedding);
