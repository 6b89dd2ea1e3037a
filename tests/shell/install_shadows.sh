#!/usr/bin/env bash
# A hostile database owner installs the (trusted) extension. Before CREATE EXTENSION it plants, in
# public (where pgvector is) and in a pre-created memory_fabric schema, a shadow of every function
# name the install and upgrade scripts call, with argument types that would beat pg_catalog's
# (quote_ident(name), an aggregate jsonb_object_agg(text, bigint), ...), and operators such as
# >=(double precision, integer). Every shadow raises "shadow ... ran as <role>" when called. Then:
#   - the install runs as the bootstrap superuser without calling any shadow;
#   - no installed object depends on anything outside pg_catalog, memory_fabric and pgvector's schema;
#   - the pipeline, the views and the maintenance calls run as ordinary roles without calling any;
#   - ALTER EXTENSION UPDATE from the previous release, with the same shadows, calls none either.
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
extdir=$("$MF_PG_CONFIG" --sharedir)/extension
current=$(awk -F'"' '/^version =/{print $2; exit}' "$MF_ROOT/Cargo.toml")
su() { mf_psql -q -X "$@"; }
owner() { mf_psql -q -X -U regress_shadow_owner "$@"; }
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }
cleanup() {
  su -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS mf_shadow" \
     -c "DROP DATABASE IF EXISTS mf_shadow_up" \
     -c "DROP ROLE IF EXISTS regress_shadow_owner" -c "DROP ROLE IF EXISTS regress_shadow_agent" \
     -c "DROP ROLE IF EXISTS regress_shadow_admin"
}
cleanup
su -d postgres -c "CREATE ROLE regress_shadow_owner LOGIN" \
   -c "CREATE ROLE regress_shadow_agent LOGIN IN ROLE memory_fabric_agent" \
   -c "CREATE ROLE regress_shadow_admin LOGIN IN ROLE memory_fabric_admin, memory_fabric_reviewer"

# Every name called unqualified in the scripts (this version's install and upgrade scripts, and
# the previous release's install): an identifier followed by "(", not after a dot or a quote.
names=$(python3 - "$extdir/memory_fabric--$current.sql" "$extdir"/memory_fabric--*--"$current".sql \
          "$(ls "$MF_ROOT"/tests/upgrade/released/memory_fabric--*.sql | sort -V | tail -1)" <<'PY'
import re, sys
skip = set("""all and any array as between case cast check coalesce create default delete distinct else end
exists extract filter for from function greatest grouping having if in insert into is join key least like
not nullif on or over primary references returning row rows select set some table then union unique update
using values when where with within index trigger procedure execute raise return query loop foreach begin
declare perform position substring trim overlay collation partition order group by limit offset lateral
only window treat convert normalize varchar char character numeric decimal timestamp time interval bit float
double real int integer bigint smallint boolean text name jsonb json vector oid regclass ordinality hnsw
include exception strict get diagnostics setof constraint foreign language immutable stable volatile
parallel cost security definer invoker replace alter drop grant revoke comment policy view schema sequence
type domain operator aggregate column role versions candidate consent memory batch f i s u""".split())
names = set()
for path in sys.argv[1:]:
    text = re.sub(r"--[^\n]*", "", open(path).read())
    names |= {m.lower() for m in re.findall(r'(?<![.\w"$%])([A-Za-z_][A-Za-z0-9_]*)\s*\(', text)}
print("\n".join(sorted(n for n in names - skip if not n.startswith("_"))))
PY
)
count=$(echo "$names" | wc -l)

# The planting, as the database owner: one schema-qualified shadow per (name, signature) that
# PostgreSQL accepts. Each raises, naming itself and the role it ran as.
plant() { # database, schema
  local db=$1 schema=$2 sql
  sql=$(for n in $names; do
    for sig in "name" "text" "integer" "bigint" "numeric" "double precision" "boolean" "jsonb" "text[]" \
               "name, name" "text, text" "text, bigint" "text, integer" "jsonb, text" "anyelement" "anyarray" \
               "regclass" "oid" "timestamp with time zone" "name, text" "text, name"; do
      printf "DO \$d\$ BEGIN CREATE FUNCTION %s.%s(%s) RETURNS text LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION ''shadow %s(%s) ran as %%'', current_user; END'; EXCEPTION WHEN OTHERS THEN NULL; END \$d\$;\n" \
        "$schema" "\"$n\"" "$sig" "$schema.$n" "$sig"
    done
  done
  cat <<SQL
CREATE FUNCTION $schema.shadow_agg(state text, a text, b bigint) RETURNS text LANGUAGE plpgsql
    AS 'BEGIN RAISE EXCEPTION ''shadow aggregate ran as %'', current_user; END';
DO \$d\$ BEGIN CREATE AGGREGATE $schema.jsonb_object_agg(text, bigint) (SFUNC = $schema.shadow_agg, STYPE = text);
EXCEPTION WHEN OTHERS THEN NULL; END \$d\$;
DO \$d\$ BEGIN CREATE AGGREGATE $schema.count(text) (SFUNC = $schema.shadow_agg, STYPE = text);
EXCEPTION WHEN OTHERS THEN NULL; END \$d\$;
DO \$d\$
DECLARE o text; t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES ('double precision', 'integer'), ('integer', 'double precision'), ('name', 'text'),
                                 ('text', 'name'), ('numeric', 'integer'), ('bigint', 'integer'), ('integer', 'bigint'),
                                 ('text', 'text'), ('jsonb', 'text'), ('timestamp with time zone', 'timestamp with time zone'))
           AS v(l, r) LOOP
    EXECUTE format('CREATE FUNCTION $schema.shadow_op(%s, %s) RETURNS boolean LANGUAGE plpgsql AS %L',
                   t.l, t.r, 'BEGIN RAISE EXCEPTION ''shadow operator ran as %'', current_user; END');
    FOREACH o IN ARRAY ARRAY['=', '<>', '>=', '<=', '>', '<', '~', '~~', '||', '?', '@>', '+', '-', '*', '/'] LOOP
      BEGIN
        EXECUTE format('CREATE OPERATOR $schema.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = $schema.shadow_op)', o, t.l, t.r);
      EXCEPTION WHEN OTHERS THEN NULL;
      END;
    END LOOP;
  END LOOP;
END
\$d\$;
SQL
  )
  printf '%s\n' "$sql" | owner -d "$db" > /dev/null
}

setup_db() { # database
  su -d postgres -c "CREATE DATABASE $1 OWNER regress_shadow_owner"
  su -d "$1" -c "CREATE EXTENSION vector"   # pgvector is not trusted: the one superuser step
  # the owner creates memory_fabric first, to plant there too (CREATE EXTENSION uses it)
  owner -d "$1" -c "CREATE SCHEMA memory_fabric"
  plant "$1" public
  plant "$1" memory_fabric
}

# a fresh install
setup_db mf_shadow
planted=$(owner -At -d mf_shadow -c "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                                    WHERE n.nspname IN ('public', 'memory_fabric') AND p.proowner = current_user::regrole")
if [ "$planted" -gt $((count * 20)) ]; then ok "the owner planted $planted shadows of the $count names the scripts call"
else notok "only $planted shadows planted"; fi
# objects planted in memory_fabric itself: the install refuses (pgrx's part resolves types there)
out=$(owner -d mf_shadow -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric" 2>&1 || true)
case $out in
  *'schema "memory_fabric" already holds objects memory_fabric did not create'*)
    ok "CREATE EXTENSION refuses a memory_fabric schema that holds planted objects";;
  *) notok "CREATE EXTENSION into a planted memory_fabric: $out";;
esac
owner -d mf_shadow -c "SET client_min_messages = warning" -c "DROP SCHEMA memory_fabric CASCADE" -c "CREATE SCHEMA memory_fabric"
if out=$(owner -d mf_shadow -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric" 2>&1); then
  ok "CREATE EXTENSION as a non-superuser database owner calls none of the shadows in public"
else
  notok "CREATE EXTENSION: $out"
fi

# no member of the extension, nor anything attached to one (defaults, constraints, indexes,
# triggers, policies, view rules), depends on an object outside the three schemas
deps=$(su -At -d mf_shadow <<'SQL'
WITH RECURSIVE ext AS (SELECT oid FROM pg_extension WHERE extname = 'memory_fabric'),
objs(classid, objid) AS (
    SELECT d.classid, d.objid FROM pg_depend d, ext
    WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
    UNION
    SELECT d.classid, d.objid FROM pg_depend d JOIN objs o ON d.refclassid = o.classid AND d.refobjid = o.objid
    WHERE d.deptype IN ('a', 'i', 'n')
),
allowed AS (SELECT oid FROM pg_namespace WHERE nspname IN ('pg_catalog', 'pg_toast', 'memory_fabric')
            UNION SELECT extnamespace FROM pg_extension WHERE extname = 'vector'),
refs AS (
    SELECT d.refclassid, d.refobjid, pg_describe_object(d.classid, d.objid, d.objsubid) AS who
    FROM pg_depend d JOIN objs o ON d.classid = o.classid AND d.objid = o.objid
)
SELECT r.who || ' -> ' || pg_describe_object(r.refclassid, r.refobjid, 0)
FROM refs r
LEFT JOIN pg_proc p ON r.refclassid = 'pg_proc'::regclass AND p.oid = r.refobjid
LEFT JOIN pg_operator op ON r.refclassid = 'pg_operator'::regclass AND op.oid = r.refobjid
LEFT JOIN pg_type t ON r.refclassid = 'pg_type'::regclass AND t.oid = r.refobjid
LEFT JOIN pg_class c ON r.refclassid = 'pg_class'::regclass AND c.oid = r.refobjid
LEFT JOIN pg_opclass oc ON r.refclassid = 'pg_opclass'::regclass AND oc.oid = r.refobjid
LEFT JOIN pg_collation co ON r.refclassid = 'pg_collation'::regclass AND co.oid = r.refobjid
WHERE coalesce(p.pronamespace, op.oprnamespace, t.typnamespace, c.relnamespace, oc.opcnamespace, co.collnamespace)
      NOT IN (SELECT oid FROM allowed)
ORDER BY 1;
SQL
)
checked=$(su -At -d mf_shadow -c "SELECT count(*) FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
                                 WHERE e.extname = 'memory_fabric' AND d.deptype = 'e'")
if [ -z "$deps" ]; then ok "none of the $checked installed objects depends on anything outside pg_catalog, memory_fabric and pgvector's schema"
else notok "installed objects depend on planted ones:"; echo "$deps" | head -20; fi

# the pipeline and the views, as ordinary roles
su -d mf_shadow -c "SELECT memory_fabric.grant_tenant('regress_shadow_agent', 't1')" \
   -c "SELECT memory_fabric.grant_tenant('regress_shadow_admin', 't1')" \
   -c "SELECT memory_fabric.register_embedding_model('t1', 'm8', 8)" > /dev/null
if out=$(mf_psql -q -X -v ON_ERROR_STOP=1 -U regress_shadow_agent -d mf_shadow 2>&1 <<'SQL'
SET memory_fabric.tenant_id = 't1';
SELECT count(*) FROM memory_fabric.capture_memory('t1', 'Returns are accepted within 30 days.', 'agent', 'PUBLIC') c,
    memory_fabric.review_candidate(c.id) r, memory_fabric.promote(c.id) m;
SELECT count(*) FROM memory_fabric.capture_memory('t1', 'Returns are accepted within 30 days.', 'agent', 'PUBLIC') c,
    memory_fabric.review_candidate(c.id) r;
SELECT count(*) FROM memory_fabric.capture_memory('t1', 'Customer c1 prefers email.', 'agent', 'INTERNAL', user_id => 'c1',
    confidence => 0.9, embedding => array_fill(0.5::real, ARRAY[8])::public.vector, embedding_model => 'm8') c,
    memory_fabric.review_candidate(c.id) r, memory_fabric.promote(c.id) m;
SELECT count(*) FROM memory_fabric.recall('t1', NULL, user_id => 'c1', query_text => 'returns within days');
SELECT count(*) FROM memory_fabric.recall('t1', NULL, user_id => 'c1', query_embedding => array_fill(0.5::real, ARRAY[8])::public.vector,
    query_embedding_model => 'm8');
SELECT count(*) FROM memory_fabric.recall('t1', NULL);
SQL
); then ok "capture, review, promote and recall as an agent call no shadow"; else notok "the agent's pipeline: $out"; fi
if out=$(mf_psql -q -X -v ON_ERROR_STOP=1 -U regress_shadow_admin -d mf_shadow 2>&1 <<'SQL'
SET memory_fabric.tenant_id = 't1';
SELECT count(*) FROM memory_fabric.metrics;
SELECT count(*) FROM memory_fabric.review_queue;
SELECT count(*) FROM memory_fabric.candidates;
SELECT count(*) FROM memory_fabric.set_policy('t1', '{"recall": {"min_score": 0.2}}');
SELECT count(*) FROM memory_fabric.record_consent('t1', 'c1', 'support', 'contract');
SELECT count(*) FROM memory_fabric.explain_recall('t1', (SELECT id FROM memory_fabric.promoted_memory LIMIT 1));
SELECT count(*) FROM memory_fabric.memory_history((SELECT id FROM memory_fabric.promoted_memory LIMIT 1));
SELECT count(*) FROM memory_fabric.forget_subject('t1', 'c1', 'asked to be forgotten');
SELECT memory_fabric.purge_expired('t1');
SQL
); then ok "the views, policy, consent, replay and erasure as an admin call no shadow"; else notok "the admin's calls: $out"; fi
if out=$(mf_psql -q -X -v ON_ERROR_STOP=1 -U regress_shadow_admin -d mf_shadow 2>&1 <<'SQL'
SET memory_fabric.tenant_id = 't1';
CALL memory_fabric.reembed_memories('t1');
CALL memory_fabric.purge_expired_memories('t1');
SQL
); then ok "the maintenance procedures as an admin call no shadow"; else notok "the procedures: $out"; fi

# an upgrade from the previous release, with the same shadows in place
prev=$(ls "$MF_ROOT"/tests/upgrade/released/memory_fabric--*.sql | sed -E 's/.*--([0-9.]+)\.sql/\1/' | grep -vx "$current" | sort -V | tail -1)
mf_sudo cp "$MF_ROOT/tests/upgrade/released/memory_fabric--$prev.sql" "$extdir/memory_fabric--$prev.sql"
# the owner installed the previous release before planting: the state an existing database is in
su -d postgres -c "CREATE DATABASE mf_shadow_up OWNER regress_shadow_owner"
su -d mf_shadow_up -c "CREATE EXTENSION vector"
owner -d mf_shadow_up -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric VERSION '$prev'" > /dev/null
plant mf_shadow_up public
plant mf_shadow_up memory_fabric
if out=$(owner -d mf_shadow_up -c "SET client_min_messages = warning" -c "ALTER EXTENSION memory_fabric UPDATE" 2>&1); then
  ok "ALTER EXTENSION memory_fabric UPDATE from $prev as the database owner calls no shadow"
else
  notok "the update from $prev: $out"
fi
mf_sudo rm -f "$extdir/memory_fabric--$prev.sql"

cleanup
exit $fail
