-- Install, and check the shape of what was installed.
CREATE EXTENSION memory_fabric CASCADE;
SELECT extname, extrelocatable, n.nspname AS schema
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE extname IN ('memory_fabric', 'vector') ORDER BY 1;

-- Every table of SPEC §2, and each one registered for pg_dump.
SELECT c.relname, c.relkind,
       c.oid = ANY (e.extconfig) AS dumped
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN pg_extension e
WHERE n.nspname = 'memory_fabric' AND c.relkind IN ('r', 'v', 'p') AND e.extname = 'memory_fabric'
ORDER BY 1;

-- The default policy.
SELECT tenant_id, version, created_by, note, jsonb_pretty(body) FROM memory_fabric.policies;

-- Append-only guards on every table, enabled ALWAYS (they fire in replica mode too).
SELECT tgrelid::regclass AS table_name, tgname, tgenabled
FROM pg_trigger
WHERE tgrelid::regclass::text LIKE 'memory_fabric.%' AND NOT tgisinternal
ORDER BY tgrelid::regclass::text, tgname;

-- capture_memory's named arguments and defaults are the contract.
SELECT unnest(string_to_array(pg_get_function_arguments('memory_fabric.capture_memory'::regproc), ', '))
       AS capture_memory_arguments;
SELECT pg_get_function_result('memory_fabric.capture_memory'::regproc) AS returns;

-- A fingerprint of every table (row count and a hash of all rows), used by later files to prove
-- that failed calls wrote nothing and that pg_dump/pg_restore kept everything. It lives in
-- public, so it is dumped and restored with the data. CREATE EXTENSION recreates the built-in
-- '*' v1 policy with a new created_at, so that one row is compared by its body.
CREATE FUNCTION public.regress_fingerprint() RETURNS TABLE (table_name text, rows bigint, hash text)
LANGUAGE sql STABLE AS $$
    SELECT 'policies', count(*), md5(coalesce(string_agg(
        CASE WHEN (x.tenant_id, x.version) = ('*', 1) THEN x.body::text ELSE x::text END, '|' ORDER BY x::text), ''))
    FROM memory_fabric.policies x
    UNION ALL SELECT 'candidates', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.candidates x
    UNION ALL SELECT 'embedding_models', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.embedding_models x
    UNION ALL SELECT 'reviews', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.reviews x
    UNION ALL SELECT 'decisions', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.decisions x
    UNION ALL SELECT 'consents', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.consents x
    UNION ALL SELECT 'promoted_memory', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.promoted_memory x
    UNION ALL SELECT 'events', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.events x
    UNION ALL SELECT 'tenant_grants', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.tenant_grants x
    UNION ALL SELECT 'recall_log', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.recall_log x
    UNION ALL SELECT 'audit_chain', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.audit_chain x
    UNION ALL SELECT 'audit_heads', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.audit_heads x
$$;

-- Runs one statement and reports its outcome as SQLSTATE, message and detail, with the
-- time-stamped ids (mc_…, pm_…, rv_…) and times masked, so refusals that name ids have stable output.
CREATE FUNCTION public.regress_try(sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text;
    id_re constant text := '(mc|pm|rv|dc|ev|cns)_[0-9]{8}t[0-9]{6}_[0-9a-z]{12}';
    ts_re constant text := '[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}';
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
    RETURN st || ': ' || regexp_replace(msg, id_re, '\1_<id>', 'g')
        || coalesce(nullif(E'\nDETAIL: ' || regexp_replace(regexp_replace(det, id_re, '\1_<id>', 'g'), ts_re, '<time>', 'g'),
                           E'\nDETAIL: '), '');
END
$$;
