#!/usr/bin/env bash
# The load test: pgbench clients mixing capture -> review -> promote (6), recall (3) and retract
# (1) on ten tenants for a bounded time, as an ordinary role, then the invariants (check.sql).
# Deadlock and serialization failures are retried (--max-tries) and reported; the refusals the
# pipeline documents under concurrency (55000) are counted by outcome; any other error aborts a
# client and fails the run.
#
#   bash tests/load/run.sh                         # 8 clients, 10 s (part of scripts/test.sh)
#   bash tests/load/run.sh --clients 32 --seconds 300
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
clients=8 seconds=10 db=memory_fabric_load
while [ $# -gt 0 ]; do
  case $1 in
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *) echo "usage: $0 [--clients N] [--seconds S]" >&2; exit 2 ;;
  esac
done
here=$MF_ROOT/tests/load
out=$MF_BUILD/load; mkdir -p "$out"
mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
mf_psql -d $db -q -v DBNAME=$db -f "$here/setup.sql" > /dev/null
rc=0
"$MF_PG_BINDIR/pgbench" -n -h "$MF_PGHOST" -p "$MF_PGPORT" -U memory_fabric_load -d $db \
  -c "$clients" -j 2 -T "$seconds" --max-tries=20 --failures-detailed \
  -f "$here/pipeline.sql@6" -f "$here/recall.sql@3" -f "$here/retract.sql@1" > "$out/pgbench.txt" 2>&1 || rc=$?
grep -E "^(number of (clients|transactions|failed|transactions retried)|total number of retries|duration|tps)|aborted|ERROR" \
  "$out/pgbench.txt" | sed 's/^/# /'
echo "# outcomes (operation, outcome, count):"
mf_psql -d $db -At -F ' | ' -c "SELECT op, outcome, count(*) FROM load.outcomes GROUP BY 1, 2 ORDER BY 1, 3 DESC" | sed 's/^/#   /'
if [ $rc != 0 ] || grep -q "aborted" "$out/pgbench.txt"; then
  echo "not ok - pgbench ran without an aborted client (rc=$rc, see $out/pgbench.txt)"
else
  echo "ok - pgbench ran $clients clients for $seconds s without an aborted client"
fi
failed=$(grep -E "^number of failed transactions" "$out/pgbench.txt" | grep -oE "[0-9]+" | head -1)
[ "${failed:-1}" = 0 ] && echo "ok - no transaction failed after retries" || echo "not ok - $failed transactions failed after retries"
mf_psql -d $db -At -F '|' -f "$here/check.sql" | grep '|' | while IFS='|' read -r inv n; do
  [ "$n" = 0 ] && echo "ok - $inv: 0" || echo "not ok - $inv: $n"
done
mf_psql -d postgres -q -c "DROP DATABASE $db WITH (FORCE)"
