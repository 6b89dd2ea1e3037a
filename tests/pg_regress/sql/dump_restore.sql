-- pg_dump -> pg_restore into a new database keeps every row of every table.
\set SHOW_CONTEXT never
-- The runner exports MF_PG_BINDIR and MF_REGRESS_TMP; pg_regress exports PGHOST/PGPORT/PGUSER.
CREATE FUNCTION pg_temp.fingerprint() RETURNS TABLE (table_name text, rows bigint, hash text)
LANGUAGE sql AS $$
    -- CREATE EXTENSION recreates the built-in '*' v1 policy (new created_at): compare its body.
    SELECT 'policies', count(*), md5(string_agg(CASE WHEN (x.tenant_id, x.version) = ('*', 1) THEN x.body::text ELSE x::text END, '|' ORDER BY x::text)) FROM memory_fabric.policies x
    UNION ALL SELECT 'candidates', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.candidates x
    UNION ALL SELECT 'embedding_models', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.embedding_models x
    UNION ALL SELECT 'reviews', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.reviews x
    UNION ALL SELECT 'decisions', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.decisions x
    UNION ALL SELECT 'consents', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.consents x
    UNION ALL SELECT 'promoted_memory', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.promoted_memory x
    UNION ALL SELECT 'events', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.events x
$$;
SELECT json_object_agg(table_name, json_build_array(rows, hash) ORDER BY table_name) AS before
FROM pg_temp.fingerprint() \gset
SELECT table_name, rows FROM pg_temp.fingerprint() ORDER BY 1;

\! "$MF_PG_BINDIR/dropdb" --if-exists memory_fabric_restored 2>/dev/null && "$MF_PG_BINDIR/pg_dump" -Fc -d memory_fabric_regress -f "$MF_REGRESS_TMP/regress.dump" && "$MF_PG_BINDIR/createdb" memory_fabric_restored && "$MF_PG_BINDIR/pg_restore" --exit-on-error -d memory_fabric_restored "$MF_REGRESS_TMP/regress.dump" && echo 'dump and restore: ok'

\c memory_fabric_restored
CREATE FUNCTION pg_temp.fingerprint() RETURNS TABLE (table_name text, rows bigint, hash text)
LANGUAGE sql AS $$
    -- CREATE EXTENSION recreates the built-in '*' v1 policy (new created_at): compare its body.
    SELECT 'policies', count(*), md5(string_agg(CASE WHEN (x.tenant_id, x.version) = ('*', 1) THEN x.body::text ELSE x::text END, '|' ORDER BY x::text)) FROM memory_fabric.policies x
    UNION ALL SELECT 'candidates', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.candidates x
    UNION ALL SELECT 'embedding_models', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.embedding_models x
    UNION ALL SELECT 'reviews', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.reviews x
    UNION ALL SELECT 'decisions', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.decisions x
    UNION ALL SELECT 'consents', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.consents x
    UNION ALL SELECT 'promoted_memory', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.promoted_memory x
    UNION ALL SELECT 'events', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.events x
$$;
-- Same rows, same content, table by table.
SELECT f.table_name, f.rows,
       (:'before'::json -> f.table_name ->> 0)::bigint = f.rows AS same_count,
       (:'before'::json -> f.table_name ->> 1) = f.hash AS same_content
FROM pg_temp.fingerprint() f ORDER BY 1;
-- The restored copy is still append-only and still captures.
UPDATE memory_fabric.candidates SET text = 'x';
SELECT count(*) AS captured
FROM memory_fabric.capture_memory('tenant_acme_prod', 'Captured after restore.', 'agent', 'PUBLIC');
\c memory_fabric_regress
DROP DATABASE memory_fabric_restored;
