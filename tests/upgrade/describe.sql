-- A canonical description of everything the memory_fabric extension owns, for comparing an
-- upgraded installation with a fresh one: one sorted line per fact, no OIDs, no version.
\pset format unaligned
\pset tuples_only on
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'memory_fabric'),
members AS (
    SELECT d.classid, d.objid FROM pg_depend d, ext
    WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
),
rels AS (SELECT c.* FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid),
funcs AS (SELECT p.* FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid),
facts(line) AS (
    SELECT 'member ' || pg_describe_object(m.classid, m.objid, 0) FROM members m
    UNION ALL
    SELECT format('relation %s kind=%s rls=%s force=%s options=%s acl=%s', r.oid::regclass, r.relkind,
                  r.relrowsecurity, r.relforcerowsecurity, r.reloptions,
                  (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(r.relacl) a))
    FROM rels r
    UNION ALL
    SELECT format('column %s.%s %s notnull=%s default=%s statistics=%s', r.oid::regclass, a.attname,
                  format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attstattarget)
    FROM rels r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef ad ON ad.adrelid = r.oid AND ad.adnum = a.attnum
    UNION ALL
    SELECT format('constraint %s %s %s', con.conrelid::regclass, con.conname, pg_get_constraintdef(con.oid))
    FROM pg_constraint con JOIN rels r ON r.oid = con.conrelid
    UNION ALL
    SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN rels r ON r.oid = i.indrelid
    UNION ALL
    SELECT format('trigger %s enabled=%s', pg_get_triggerdef(t.oid), t.tgenabled)
    FROM pg_trigger t JOIN rels r ON r.oid = t.tgrelid WHERE NOT t.tgisinternal
    UNION ALL
    SELECT format('policy %s %s cmd=%s permissive=%s roles=%s using=%s check=%s', p.polrelid::regclass, p.polname,
                  p.polcmd, p.polpermissive, (SELECT array_agg(x::regrole::text ORDER BY x::regrole::text) FROM unnest(p.polroles) x),
                  pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
    FROM pg_policy p JOIN rels r ON r.oid = p.polrelid
    UNION ALL
    SELECT format('view %s %s', r.oid::regclass, pg_get_viewdef(r.oid)) FROM rels r WHERE r.relkind = 'v'
    UNION ALL
    SELECT format('function %s secdef=%s config=%s acl=%s', f.oid::regprocedure, f.prosecdef, f.proconfig,
                  (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(f.proacl) a))
    FROM funcs f
    UNION ALL
    SELECT 'definition ' || f.oid::regprocedure || E'\n' || pg_get_functiondef(f.oid) FROM funcs f WHERE f.prokind = 'f'
    UNION ALL
    SELECT format('comment %s %s', pg_describe_object(m.classid, m.objid, 0), obj_description(m.objid, c.relname))
    FROM members m JOIN pg_class c ON c.oid = m.classid WHERE obj_description(m.objid, c.relname) IS NOT NULL
    UNION ALL
    SELECT format('init_privs %s %s', pg_describe_object(ip.classoid, ip.objoid, ip.objsubid),
                  (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(ip.initprivs) a))
    FROM pg_init_privs ip JOIN members m ON m.classid = ip.classoid AND m.objid = ip.objoid
    UNION ALL
    SELECT format('config_dump %s %s', c::regclass, e.extcondition[i])
    FROM pg_extension e, unnest(e.extconfig) WITH ORDINALITY AS u(c, i) WHERE e.extname = 'memory_fabric'
    UNION ALL
    SELECT 'role ' || rolname FROM pg_roles WHERE rolname LIKE 'memory\_fabric\_%'
)
SELECT line FROM facts ORDER BY line;
