-- An embedding model gets its nearest-neighbour index from one function call:
-- memory_fabric.create_embedding_index(model, dimensions), and review's search of a scope above
-- memory_fabric.exact_search_limit uses it.
\set SHOW_CONTEXT never
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_idx_admin') THEN DROP ROLE regress_idx_admin; END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_idx_nobody') THEN DROP ROLE regress_idx_nobody; END IF;
END $$;
CREATE ROLE regress_idx_admin IN ROLE memory_fabric_admin;
CREATE ROLE regress_idx_nobody;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_idx_admin', 't_idx');
SET memory_fabric.tenant_id = 't_idx';
SELECT count(*) FROM memory_fabric.register_embedding_model('t_idx', 'regress/tiny-8', 8);
-- eight memories of a model of 8 dimensions
SELECT count(*) FROM (
    SELECT memory_fabric.promote(c.id)
    FROM generate_series(1, 8) i,
         LATERAL memory_fabric.capture_memory('t_idx', format('Depot %s opens at %s:00.', i, i + 5), 'agent', 'INTERNAL',
             embedding => (SELECT array_agg(CASE WHEN j = i THEN 1 ELSE 0.1 END ORDER BY j) FROM generate_series(1, 8) j)::vector,
             embedding_model => 'regress/tiny-8') c,
         LATERAL memory_fabric.review_candidate(c.id) r) x;
SELECT memory_fabric.create_embedding_index('regress/tiny-8', 8) AS idx \gset
SELECT :'idx' ~ '^promoted_hnsw_[0-9a-f]{16}_8$' AS named;
SELECT pg_catalog.regexp_replace(indexdef, 'promoted_hnsw_[0-9a-f]+_8', 'promoted_hnsw_…_8') AS indexdef
FROM pg_catalog.pg_indexes WHERE schemaname = 'memory_fabric' AND indexname = :'idx';
-- built sparse (src/api/create_embedding_index.rs says why)
SELECT i.reloptions FROM pg_catalog.pg_class i WHERE i.oid = ('memory_fabric.' || :'idx')::regclass;
-- no model has an HNSW index unless this function made it: the built-in ones have none
SELECT c.relname ~ '^promoted_hnsw_' AS made_here, count(*)
FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class c ON c.oid = x.indexrelid JOIN pg_catalog.pg_am a ON a.oid = c.relam
WHERE x.indrelid = 'memory_fabric.promoted_memory'::regclass AND a.amname = 'hnsw' GROUP BY 1;
-- again: the same index, nothing created
SELECT memory_fabric.create_embedding_index('regress/tiny-8', 8) = :'idx' AS same;
-- review searches the index once the scope is above memory_fabric.exact_search_limit: a
-- near-repeat of depot 3 is found as its duplicate through it (on eight rows the planner would
-- rather sort them all, so sorting and scans are discouraged here)
SET memory_fabric.exact_search_limit = 0;
SET enable_seqscan = off;
SET enable_sort = off;
SELECT r.status, m.text AS duplicate_of
FROM memory_fabric.capture_memory('t_idx', 'Depot 3 opens at 8:00!', 'agent', 'INTERNAL',
         embedding => '[0.1, 0.1, 1, 0.1, 0.1, 0.1, 0.1, 0.1]', embedding_model => 'regress/tiny-8') c,
     memory_fabric.review_candidate(c.id) r
LEFT JOIN memory_fabric.promoted_memory m ON m.id = r.duplicate_of_id;
RESET enable_sort;
RESET enable_seqscan;
RESET memory_fabric.exact_search_limit;
-- the statistics of this backend, flushed when it is idle next
SELECT pg_catalog.pg_stat_force_next_flush();
SELECT pg_catalog.pg_stat_clear_snapshot();
SELECT idx_scan > 0 AS index_searched FROM pg_catalog.pg_stat_user_indexes WHERE indexrelname = :'idx';
-- errors: dimensions out of range, no model, a model whose vectors have other dimensions
SELECT memory_fabric.create_embedding_index('regress/tiny-8', 0);
SELECT memory_fabric.create_embedding_index('regress/tiny-8', 2001);
SELECT memory_fabric.create_embedding_index(NULL, 8);
SELECT memory_fabric.create_embedding_index('', 8);
SELECT memory_fabric.create_embedding_index('regress/tiny-8', 16);
-- an admin of one tenant may not (the index serves every tenant), a role without grants cannot call it
SET ROLE regress_idx_admin;
SELECT memory_fabric.create_embedding_index('regress/tiny-8', 8);
SET ROLE regress_idx_nobody;
SELECT memory_fabric.create_embedding_index('regress/tiny-8', 8);
RESET ROLE;
DROP ROLE regress_idx_nobody;
