#!/usr/bin/env bash
# pg_dump / pg_restore as a non-superuser owner keeps every row, policy and grant.
# A non-superuser database owner installs memory_fabric (it is trusted), writes through the
# pipeline, grants tenants, dumps, and restores into a new database. The one superuser step is
# installing pgvector, which is not a trusted extension on this machine.
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
out=$MF_BUILD/owner_dump; rm -rf "$out"; mkdir -p "$out"; chmod 777 "$out"
su() { mf_psql -q -X "$@"; }
owner() { mf_psql -q -X -U regress_owner "$@"; }
cleanup() {
  su -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS mf_owned_src" \
     -c "DROP DATABASE IF EXISTS mf_owned_dst" -c "DROP ROLE IF EXISTS regress_owner" -c "DROP ROLE IF EXISTS regress_app"
}
cleanup
su -d postgres -c "CREATE ROLE regress_owner LOGIN CREATEDB" -c "CREATE ROLE regress_app LOGIN IN ROLE memory_fabric_agent" \
   -c "CREATE DATABASE mf_owned_src OWNER regress_owner" -c "CREATE DATABASE mf_owned_dst OWNER regress_owner"
for db in mf_owned_src mf_owned_dst; do su -d "$db" -c "CREATE EXTENSION vector"; done

owner -d mf_owned_src <<'SQL' > /dev/null
\set ON_ERROR_STOP 1
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;
CREATE EXTENSION memory_fabric;
SELECT memory_fabric.grant_tenant('regress_app', 't1');
SELECT memory_fabric.grant_tenant('regress_app', 't2');
SELECT memory_fabric.revoke_tenant('regress_app', 't2');
INSERT INTO memory_fabric.policies (tenant_id, version, body) VALUES ('t1', 2, '{"recall": {"min_score": 0.3}}');
SELECT m.id FROM memory_fabric.capture_memory('t1', 'Returns are accepted within 30 days.', 'agent', 'PUBLIC') c,
    memory_fabric.review_candidate(c.id) r, memory_fabric.promote(c.id) m;
SELECT m.id FROM memory_fabric.capture_memory('t1', 'Returns are accepted within 45 days.', 'system', 'PUBLIC',
    evidence_refs => '["kb:v2"]') c, memory_fabric.review_candidate(c.id) r, memory_fabric.promote(c.id) m;
SELECT m.id FROM memory_fabric.capture_memory('t1', 'Customer c1 is a VIP.', 'operator', 'CONFIDENTIAL',
    user_id => 'c1', actor => 'op:alice') c, memory_fabric.review_candidate(c.id) r, memory_fabric.approve(c.id, 'op:bob') m;
SELECT memory_fabric.reject(c.id, 'op:bob', 'noise')
FROM memory_fabric.capture_memory('t1', 'Customer said hi.', 'operator', 'PUBLIC', actor => 'op:alice') c,
     memory_fabric.review_candidate(c.id) r;
SQL

fingerprint() {
  owner -At -d "$1" -c "
    SELECT string_agg(t || ':' || n || ':' || h, ' ' ORDER BY t) FROM (
      SELECT 'policies' t, count(*) n, md5(string_agg(CASE WHEN (tenant_id, version) = ('*', 1) THEN body::text ELSE x::text END, '|' ORDER BY x::text)) h FROM memory_fabric.policies x
      UNION ALL SELECT 'candidates', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.candidates x
      UNION ALL SELECT 'reviews', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.reviews x
      UNION ALL SELECT 'decisions', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.decisions x
      UNION ALL SELECT 'promoted_memory', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.promoted_memory x
      UNION ALL SELECT 'events', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.events x
      UNION ALL SELECT 'tenant_grants', count(*), md5(string_agg(x::text, '|' ORDER BY x::text)) FROM memory_fabric.tenant_grants x
      UNION ALL SELECT 'embedding_models', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.embedding_models x
      UNION ALL SELECT 'consents', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memory_fabric.consents x) s"
}

# Dump as the owner. Row-level security is forced, so the dump goes through it (the owner's
# policy shows every row) and as INSERTs, which a restore under row-level security needs.
"$MF_PG_BINDIR/pg_dump" -h "$MF_PGHOST" -p "$MF_PGPORT" -U regress_owner --enable-row-security --inserts -Fc \
  -d mf_owned_src -f "$out/owned.dump"
# pgvector was installed by the superuser in the target: leave its entries out of the restore.
"$MF_PG_BINDIR/pg_restore" -l "$out/owned.dump" | grep -v 'EXTENSION - vector\|COMMENT - EXTENSION vector' > "$out/owned.list"
"$MF_PG_BINDIR/pg_restore" -h "$MF_PGHOST" -p "$MF_PGPORT" -U regress_owner --enable-row-security --exit-on-error \
  -L "$out/owned.list" -d mf_owned_dst "$out/owned.dump"

fail=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fail=1; fi; }
src=$(fingerprint mf_owned_src); dst=$(fingerprint mf_owned_dst)
check "every row is restored, table by table" '[ "$src" = "$dst" ]'
check "the source held data in every pipeline table" '! grep -qE "(candidates|reviews|decisions|promoted_memory|events|tenant_grants):0:" <<<"$src"'
owner -d mf_owned_src -f "$MF_ROOT/tests/upgrade/describe.sql" > "$out/src.txt"
owner -d mf_owned_dst -f "$MF_ROOT/tests/upgrade/describe.sql" > "$out/dst.txt"
check "every policy, grant, privilege and function is restored (catalog comparison)" 'diff -u "$out/src.txt" "$out/dst.txt" > "$out/describe.diff"'
check "the owner is not a superuser" '[ "$(owner -At -d mf_owned_dst -c "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")" = f ]'
check "the restored extension belongs to the owner" \
  '[ "$(su -At -d mf_owned_dst -c "SELECT extowner::regrole FROM pg_extension WHERE extname = '"'"'memory_fabric'"'"'")" = regress_owner ]'
app=$(mf_psql -q -X -At -U regress_app -d mf_owned_dst -c "SET memory_fabric.tenant_id = 't1'" \
      -c "SELECT string_agg(text, ' | ' ORDER BY text) FROM memory_fabric.recall('t1', NULL, classification_allowed => ARRAY['PUBLIC'])")
check "a tenant grant restored works: the app role recalls t1 (the superseded fact stays hidden)" \
  '[ "$app" = "Returns are accepted within 45 days." ]'
denied=$(mf_psql -q -X -At -U regress_app -d mf_owned_dst -c "SET memory_fabric.tenant_id = 't2'" \
         -c "SELECT memory_fabric.recall('t2', NULL)" 2>&1 || true)
check "a revoked grant stays revoked" 'grep -q "has no access to tenant" <<<"$denied"'
upd=$(owner -d mf_owned_dst -c "UPDATE memory_fabric.candidates SET text = 'x'" 2>&1 || true)
check "the restored tables are still append-only for the owner" 'grep -q "append-only" <<<"$upd"'
[ $fail = 0 ] && cleanup
exit $fail
