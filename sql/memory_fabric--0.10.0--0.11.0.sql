-- memory_fabric 0.10.0 → 0.11.0: speed at a million memories. Recall without a query reads
-- promoted_recall in order again and recall with a query reads promoted_scope_vectors index-only
-- (the visibility rules' user and intent conditions are written without OR);
-- review reads retracted memories from their own index; the HNSW graphs are built sparser.
-- Written by hand; tests/upgrade/run.sh checks that it ends with the catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.11.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION memory_fabric._visible_memories(for_tenant text, for_user text, for_intent text,
                                                classifications text[], at timestamptz)
RETURNS SETOF memory_fabric._visible_memory
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT m.id, m.tenant_id, m.user_id, m.intent_scope, m.classification, m.consent_id, m.priority, m.promoted_at,
           m.contradicts_id, m.embedding_model, m.embedding
    FROM memory_fabric.promoted_memory m
    WHERE m.tenant_id = _visible_memories.for_tenant
      -- the user's own memories and the user-less ones, cross-intent or of the intent. Written
      -- without OR: recall adds user_id = for_user or user_id IS NULL, and intent_scope IS NULL
      -- or intent_scope = for_intent, to each of its queries; with an OR here its generic plans
      -- combined two bitmap scans and read the heap (or sorted the scope) instead of reading
      -- promoted_recall in order or promoted_scope_vectors index-only.
      AND coalesce(m.user_id = _visible_memories.for_user, m.user_id IS NULL)
      AND coalesce(m.intent_scope = _visible_memories.for_intent, m.intent_scope IS NULL)
      AND m.promoted_at <= _visible_memories.at
      AND (m.retracted_at IS NULL OR m.retracted_at > _visible_memories.at)
      AND (m.expires_at IS NULL OR m.expires_at > _visible_memories.at)
      AND m.classification = ANY (_visible_memories.classifications)
      AND (m.consent_id IS NULL OR EXISTS (
            SELECT 1 FROM memory_fabric.consents k
            WHERE k.id = m.consent_id AND k.captured_at <= _visible_memories.at
              AND (k.revoked_at IS NULL OR k.revoked_at > _visible_memories.at)
              AND (k.valid_until IS NULL OR k.valid_until > _visible_memories.at)));
END;

-- Review compares a candidate with the retracted memories of its tenant and user; they are a
-- few of the scope's rows, kept apart so that review does not visit the live ones.
CREATE INDEX promoted_retracted ON memory_fabric.promoted_memory (tenant_id, user_id)
    WHERE retracted_at IS NOT NULL AND erased_at IS NULL;

-- The built-in models' HNSW indexes, and those memory_fabric.create_embedding_index() made, are
-- built again with the parameters a fresh install has (sql/schema.sql says why). On a large
-- table this is most of the upgrade's time.
DO $$
DECLARE i text;
BEGIN
    FOR i IN SELECT c.relname FROM pg_catalog.pg_index x
             JOIN pg_catalog.pg_class c ON c.oid = x.indexrelid
             JOIN pg_catalog.pg_am a ON a.oid = c.relam
             WHERE x.indrelid = 'memory_fabric.promoted_memory'::pg_catalog.regclass AND a.amname = 'hnsw'
               AND (c.relname IN ('promoted_builtin_hnsw', 'promoted_semantic_hnsw') OR c.relname LIKE 'promoted\_hnsw\_%')
             ORDER BY c.relname
    LOOP
        EXECUTE pg_catalog.format('ALTER INDEX memory_fabric.%I SET (m = 8, ef_construction = 32)', i);
        EXECUTE pg_catalog.format('REINDEX INDEX memory_fabric.%I', i);
    END LOOP;
END $$;
