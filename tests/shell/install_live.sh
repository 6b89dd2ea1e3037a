#!/usr/bin/env bash
# Installing a new build while clients run the pipeline. Backends of the tests' cluster have
# memory_fabric.so mapped while scripts/install.sh puts a new build in place three times
# (--force: every file renamed into place, a new inode each time). Then:
#   - no backend died: every pgbench client finished, no transaction failed, the server log has no
#     backend "terminated by signal" and the postmaster was never restarted;
#   - the library file is a new one, and a new connection runs the pipeline with it;
#   - a database still on the previous release updates with ALTER EXTENSION memory_fabric UPDATE
#     and runs the pipeline after it.
# Copying over the library in place instead (what cargo pgrx install does) kills the backends that
# have it mapped (SIGBUS): MF_INSTALL_INPLACE=1 does that, to see this test catch it.
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
db=mf_install_live db_old=mf_install_live_old role=mf_install_live_agent
out=$MF_BUILD/install_live; rm -rf "$out"; mkdir -p "$out"; chmod 777 "$out"
current=$(awk -F'"' '/^version =/{print $2; exit}' "$MF_ROOT/Cargo.toml")
extdir=$("$MF_PG_CONFIG" --sharedir)/extension
lib=$("$MF_PG_CONFIG" --pkglibdir)/memory_fabric.so
fail=0
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }
q() { mf_psql -q -X "$@"; }

# the newest released version before this one, installed from its pinned script
prev=$(ls "$MF_ROOT"/tests/upgrade/released/memory_fabric--*.sql | sed -E 's/.*memory_fabric--(.*)\.sql/\1/' \
       | grep -vxF "$current" | sort -V | tail -1)
cp "$MF_ROOT/tests/upgrade/released/memory_fabric--$prev.sql" "$extdir/memory_fabric--$prev.sql"

q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" \
  -c "DROP DATABASE IF EXISTS $db_old WITH (FORCE)" -c "CREATE DATABASE $db" -c "CREATE DATABASE $db_old"
q -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $role" \
  -c "CREATE ROLE $role LOGIN IN ROLE memory_fabric_agent"
q -d "$db" -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE" \
  -c "SELECT count(*) FROM memory_fabric.grant_tenant('$role', 't_live')" >/dev/null
q -d "$db_old" -c "SET client_min_messages = warning" -c "CREATE EXTENSION vector" \
  -c "CREATE EXTENSION memory_fabric VERSION '$prev'" \
  -c "SELECT count(*) FROM memory_fabric.grant_tenant('$role', 't_live')" >/dev/null

# one pipeline call as the agent: capture, review, promote when review allows, recall (each client
# its own user, so that clients never race in one scope)
cat > "$out/pipeline.sql" <<'SQL'
\set n random(1, 1000000000)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', 't_live', true);
SELECT memory_fabric.promote(c.id)
FROM memory_fabric.capture_memory('t_live', 'Customer ' || :n || ' asked about the installation.', 'agent', 'INTERNAL',
                                  user_id => 'u' || :client_id) c,
     LATERAL memory_fabric.review_candidate(c.id) r
WHERE r.status = 'pending_promotion' AND r.reviewer = 'auto';
SELECT count(*) FROM memory_fabric.recall('t_live', NULL, user_id => 'u' || :client_id, query_text => 'installation');
COMMIT;
SQL

started=$(q -At -d postgres -c "SELECT pg_postmaster_start_time()")
log=$MF_STATE/log/postgres.log
log_from=$(stat -c %s "$log")
inode_before=$(stat -c %i "$lib")

# the build to install, staged once (the installs below rename it into place)
bash "$MF_ROOT/scripts/install.sh" > "$out/stage.log" 2>&1 || { cat "$out/stage.log"; notok "the build is staged"; exit 1; }

"$MF_PG_BINDIR/pgbench" -n -h "$MF_PGHOST" -p "$MF_PGPORT" -U "$role" -d "$db" -c 4 -j 2 -T 14 \
  -f "$out/pipeline.sql" > "$out/pgbench.txt" 2>&1 &
bench=$!
installs=0
for i in 1 2 3; do
  sleep 3
  if [ "${MF_INSTALL_INPLACE:-0}" = 1 ]; then
    stage=$(ls -d "$MF_BUILD"/stage/*-debug | head -1)
    cp "$stage$lib" "$lib"        # in place: what this test exists to refuse
  else
    bash "$MF_ROOT/scripts/install.sh" --no-build --force >> "$out/install.log" 2>&1 || { cat "$out/install.log"; break; }
  fi
  installs=$((installs + 1))
done
rc=0; wait $bench || rc=$?
[ $installs = 3 ] && ok "a new build installed 3 times while 4 clients ran the pipeline" \
                  || notok "a new build installed 3 times while 4 clients ran the pipeline ($installs)"
processed=$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$out/pgbench.txt")
failed=$(sed -nE 's/^number of failed transactions: ([0-9]+).*/\1/p' "$out/pgbench.txt")
echo "# pgbench: rc $rc, ${processed:-?} transactions, ${failed:-?} failed"
if [ $rc = 0 ] && [ "${processed:-0}" -gt 0 ] && [ "${failed:-1}" = 0 ] && ! grep -qE "aborted|ERROR|FATAL" "$out/pgbench.txt"; then
  ok "every client finished without an error"
else
  sed 's/^/# /' "$out/pgbench.txt" | tail -20
  notok "every client finished without an error"
fi
died=$(tail -c +"$((log_from + 1))" "$log" | grep -E "terminated by signal|was terminated by|terminating any other active server processes|all server processes terminated" || true)
if [ -z "$died" ]; then
  ok "no backend died"
else
  printf '%s\n' "$died" | head -5 | sed 's/^/# /'
  notok "no backend died"
fi
now=$(q -At -d postgres -c "SELECT pg_postmaster_start_time()" 2>/dev/null || echo down)
[ "$now" = "$started" ] && ok "the server was never restarted" || notok "the server was never restarted ($started, now $now)"
inode_after=$(stat -c %i "$lib")
if [ "${MF_INSTALL_INPLACE:-0}" = 1 ] || [ "$inode_after" != "$inode_before" ]; then
  ok "the library is a new file (inode $inode_before, now $inode_after)"
else
  notok "the library is a new file (inode $inode_before, now $inode_after)"
fi

# a new connection runs the pipeline on the new library
got=$(mf_psql -X -q -At -U "$role" -d "$db" -v ON_ERROR_STOP=1 2>&1 <<'SQL' || true
BEGIN;
SELECT set_config('memory_fabric.tenant_id', 't_live', true) \gset
SELECT r.status FROM memory_fabric.capture_memory('t_live', 'The warehouse in Faro opens at 07:00.', 'agent', 'INTERNAL') c,
     LATERAL memory_fabric.review_candidate(c.id) r;
COMMIT;
SQL
)
[ "$got" = pending_promotion ] && ok "a new connection runs the pipeline after the install" \
                               || notok "a new connection runs the pipeline after the install: $got"

# the database on the previous release updates, then runs the pipeline
got=$(q -At -d "$db_old" -c "ALTER EXTENSION memory_fabric UPDATE" \
        -c "SELECT extversion FROM pg_extension WHERE extname = 'memory_fabric'" 2>&1 || true)
[ "$got" = "$current" ] && ok "ALTER EXTENSION memory_fabric UPDATE from $prev to $current after the install" \
                        || notok "ALTER EXTENSION memory_fabric UPDATE from $prev to $current after the install: $got"
got=$(mf_psql -X -q -At -U "$role" -d "$db_old" -v ON_ERROR_STOP=1 2>&1 <<'SQL' || true
BEGIN;
SELECT set_config('memory_fabric.tenant_id', 't_live', true) \gset
SELECT (memory_fabric.promote(c.id)).id IS NOT NULL
FROM memory_fabric.capture_memory('t_live', 'The depot in Braga closes at noon on Saturdays.', 'agent', 'INTERNAL') c,
     LATERAL memory_fabric.review_candidate(c.id) r;
SELECT count(*) FROM memory_fabric.recall('t_live', NULL, query_text => 'Braga depot');
COMMIT;
SQL
)
[ "$got" = "$(printf 't\n1')" ] && ok "the updated database captures, reviews, promotes and recalls" \
                                || notok "the updated database captures, reviews, promotes and recalls: $got"

q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE $db WITH (FORCE)" -c "DROP DATABASE $db_old WITH (FORCE)" \
  -c "DROP ROLE $role"
rm -f "$extdir/memory_fabric--$prev.sql"
exit $fail
