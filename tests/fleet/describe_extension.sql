-- Every object of one extension (:ext) as a line: what it is and its definition, privileges and
-- owner-independent attributes, sorted, so that a fresh install and an upgrade can be compared
-- with diff (tests/fleet/test_upgrade.py).
WITH members AS (
    SELECT d.classid, d.objid
    FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e' AND e.extname = :'ext'
)
SELECT line FROM (
    SELECT pg_catalog.pg_describe_object(m.classid, m.objid, 0) || ' | ' ||
           CASE m.classid
             WHEN 'pg_catalog.pg_proc'::pg_catalog.regclass THEN
                 (SELECT pg_catalog.pg_get_functiondef(p.oid) || ' | acl ' ||
                         coalesce((SELECT pg_catalog.string_agg(a.grantee::pg_catalog.regrole::text || ':' || a.privilege_type, ',' ORDER BY 1)
                                   FROM pg_catalog.aclexplode(p.proacl) a WHERE a.grantee <> 0), '') ||
                         CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
                                           WHERE a.grantee = 0) THEN ',PUBLIC' ELSE '' END
                  FROM pg_catalog.pg_proc p WHERE p.oid = m.objid)
             WHEN 'pg_catalog.pg_class'::pg_catalog.regclass THEN
                 (SELECT c.relkind::text || ' ' || coalesce(pg_catalog.pg_get_viewdef(c.oid), '') || ' cols ' ||
                         coalesce((SELECT pg_catalog.string_agg(a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod)
                                                                || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END, ', ' ORDER BY a.attnum)
                                   FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') ||
                         ' acl ' || coalesce((SELECT pg_catalog.string_agg(a.grantee::pg_catalog.regrole::text || ':' || a.privilege_type, ',' ORDER BY 1)
                                              FROM pg_catalog.aclexplode(c.relacl) a WHERE a.grantee <> 0), '') ||
                         ' idx ' || coalesce((SELECT pg_catalog.string_agg(pg_catalog.pg_get_indexdef(i.indexrelid), '; ' ORDER BY 1)
                                              FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid), '') ||
                         ' con ' || coalesce((SELECT pg_catalog.string_agg(pg_catalog.pg_get_constraintdef(k.oid), '; ' ORDER BY 1)
                                              FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid), '')
                  FROM pg_catalog.pg_class c WHERE c.oid = m.objid)
             WHEN 'pg_catalog.pg_type'::pg_catalog.regclass THEN
                 (SELECT t.typtype::text || ' ' || coalesce((SELECT pg_catalog.string_agg(a.attname || ' ' || pg_catalog.format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                                                       FROM pg_catalog.pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped), '')
                  FROM pg_catalog.pg_type t WHERE t.oid = m.objid)
             WHEN 'pg_catalog.pg_namespace'::pg_catalog.regclass THEN
                 (SELECT coalesce((SELECT pg_catalog.string_agg(a.grantee::pg_catalog.regrole::text || ':' || a.privilege_type, ',' ORDER BY 1)
                                   FROM pg_catalog.aclexplode(n.nspacl) a WHERE a.grantee <> 0), '') ||
                         CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.aclexplode(n.nspacl) a WHERE a.grantee = 0) THEN ',PUBLIC' ELSE '' END
                  FROM pg_catalog.pg_namespace n WHERE n.oid = m.objid)
             ELSE ''
           END AS line
    FROM members m
    UNION ALL
    SELECT 'config dump ' || pg_catalog.array_to_string(e.extconfig::pg_catalog.regclass[]::text[], ',') || ' | ' ||
           coalesce(pg_catalog.array_to_string(e.extcondition, ','), '') || ' | version ' || e.extversion
    FROM pg_catalog.pg_extension e WHERE e.extname = :'ext'
) s ORDER BY 1;
