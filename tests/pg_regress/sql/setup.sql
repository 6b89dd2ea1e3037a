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
