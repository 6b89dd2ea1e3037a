-- pg_dump -> pg_restore into a new database keeps every row of every table.
\set SHOW_CONTEXT never
-- Uses public.regress_fingerprint() from setup.sql, which is dumped and restored too.
-- The runner exports MF_PG_BINDIR and MF_REGRESS_TMP; pg_regress exports PGHOST/PGPORT/PGUSER.
SELECT json_object_agg(table_name, json_build_array(rows, hash) ORDER BY table_name) AS before
FROM public.regress_fingerprint() \gset
SELECT table_name, rows FROM public.regress_fingerprint() ORDER BY 1;
-- every tenant's audit chain is whole before the dump
SELECT count(*) AS tenants, count(*) FILTER (WHERE v.intact) AS intact
FROM memory_fabric.audit_heads h, memory_fabric.verify_audit(h.tenant_id) v;

\! "$MF_PG_BINDIR/dropdb" --if-exists memory_fabric_restored 2>/dev/null && "$MF_PG_BINDIR/pg_dump" -Fc -d memory_fabric_regress -f "$MF_REGRESS_TMP/regress.dump" && "$MF_PG_BINDIR/createdb" memory_fabric_restored && "$MF_PG_BINDIR/pg_restore" --exit-on-error -d memory_fabric_restored "$MF_REGRESS_TMP/regress.dump" && echo 'dump and restore: ok'

\c memory_fabric_restored
-- Same rows, same content, table by table.
SELECT f.table_name, f.rows,
       (:'before'::json -> f.table_name ->> 0)::bigint = f.rows AS same_count,
       (:'before'::json -> f.table_name ->> 1) = f.hash AS same_content
FROM public.regress_fingerprint() f ORDER BY 1;
-- The restored copy is still append-only and still captures.
UPDATE memory_fabric.candidates SET text = 'x';
SELECT count(*) AS captured
FROM memory_fabric.capture_memory('tenant_acme_prod', 'Captured after restore.', 'agent', 'PUBLIC');
-- The chains came with their rows, not made again: each whole, and a promotion after the restore
-- is the next link of its tenant's chain.
SELECT count(*) AS tenants, count(*) FILTER (WHERE v.intact) AS intact
FROM memory_fabric.audit_heads h, memory_fabric.verify_audit(h.tenant_id) v;
SELECT head_seq AS acme_head FROM memory_fabric.verify_audit('tenant_acme_prod') \gset
SELECT (memory_fabric.promote(c.id)).id IS NOT NULL AS promoted
FROM memory_fabric.capture_memory('tenant_acme_prod', 'The Faro depot opens at 07:30 after the restore.', 'agent', 'PUBLIC') c,
     LATERAL memory_fabric.review_candidate(c.id) r;
SELECT intact, head_seq = :acme_head + 1 AS next_link FROM memory_fabric.verify_audit('tenant_acme_prod');
\c memory_fabric_regress
DROP DATABASE memory_fabric_restored;
