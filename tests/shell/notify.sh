#!/usr/bin/env bash
# A durable candidate queued for a human sends one notification on channel memory_fabric when
# its review commits; an auto-tier review sends none, and a rolled-back review sends none.
# (psql prints the sender's PID, so this lives here rather than in pg_regress.)
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
db=memory_fabric_shell
mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
mf_psql -d "$db" -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE"
out=$(mf_psql -d "$db" -q -t <<'SQL'
LISTEN memory_fabric;
SELECT status FROM memory_fabric.review_candidate(
  (SELECT id FROM memory_fabric.capture_memory('t_notify', 'Depot moved to Braga.', 'operator', 'INTERNAL', actor => 'op:a')));
SELECT 'after durable';
SELECT status FROM memory_fabric.review_candidate(
  (SELECT id FROM memory_fabric.capture_memory('t_notify', 'Agent noted the depot opens at 8.', 'agent', 'INTERNAL')));
SELECT 'after auto';
BEGIN;
SELECT status FROM memory_fabric.review_candidate(
  (SELECT id FROM memory_fabric.capture_memory('t_notify', 'Operator: the depot closes at 18.', 'operator', 'INTERNAL')));
ROLLBACK;
SELECT 'after rollback';
SQL
)
mf_psql -d postgres -q -c "DROP DATABASE $db"
fail=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fail=1; fi; }
n=$(grep -c 'Asynchronous notification "memory_fabric"' <<<"$out" || true)
check "exactly one notification" '[ "$n" = 1 ]'
check "it says memory.queued and nothing else" \
  'grep "Asynchronous notification" <<<"$out" | grep -q "payload \"{\"event\":\"memory.queued\"}\""'
check "it names no tenant, id, tier or text (any role can LISTEN)" \
  '! grep "Asynchronous notification" <<<"$out" | grep -q "t_notify\|tenant\|Depot\|mc_\|rv_\|durable"'
check "it arrives with the durable review, before the auto-tier one" \
  '[ "$(grep -n "Asynchronous notification" <<<"$out" | cut -d: -f1)" -lt "$(grep -n "after durable" <<<"$out" | cut -d: -f1)" ]'
[ $fail = 0 ] || { echo "$out"; exit 1; }
