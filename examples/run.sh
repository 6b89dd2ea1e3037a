#!/usr/bin/env bash
# Runs the client examples against the local cluster as an ordinary role and checks their
# assertions (each exits non-zero on a wrong result). Dependencies come from each example's own
# pinned manifest.
#   bash examples/run.sh
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
db=memory_fabric_examples
mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
mf_psql -d $db -q -o /dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION memory_fabric CASCADE;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_example_app') THEN
        CREATE ROLE memory_fabric_example_app LOGIN IN ROLE memory_fabric_agent;
    END IF;
END $$;
SELECT count(*) FROM memory_fabric.grant_tenant('memory_fabric_example_app', 'acme');
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_example_reviewer') THEN
        CREATE ROLE memory_fabric_example_reviewer LOGIN IN ROLE memory_fabric_reviewer;
    END IF;
END $$;
SELECT count(*) FROM memory_fabric.grant_tenant('memory_fabric_example_reviewer', 'acme');
SQL
conn="host=$MF_PGHOST port=$MF_PGPORT dbname=$db user=memory_fabric_example_app"

# Python: psycopg 3 and the pgvector package
python3 -m pip install -q --root-user-action=ignore -r "$MF_ROOT/examples/python/requirements.txt"
if python3 "$MF_ROOT/examples/python/memory_agent.py" "$conn"; then
  echo "ok - examples/python/memory_agent.py"
else
  echo "not ok - examples/python/memory_agent.py"
fi
# The operator workflow: a reviewer listening on memory_fabric approves the durable fact an
# operator-sourced capture puts in the human queue, as soon as its notification arrives.
rconn="host=$MF_PGHOST port=$MF_PGPORT dbname=$db user=memory_fabric_example_reviewer"
out=$MF_BUILD/examples; mkdir -p "$out"
python3 "$MF_ROOT/examples/python/reviewer.py" "$rconn" --tenant acme --as op:ana --watch --decide approve --max 1 \
  --timeout 30 > "$out/reviewer.txt" 2>&1 & rpid=$!
sleep 1
cid=$("$MF_PG_BINDIR/psql" -XAtq -d "$conn" -c "SELECT set_config('memory_fabric.tenant_id', 'acme', false)" \
  -c "SELECT id FROM memory_fabric.capture_memory('acme', 'Refunds above 500 euros need a manager sign-off.', 'operator', 'INTERNAL', actor => 'op:writer')" \
  | tail -1)
"$MF_PG_BINDIR/psql" -XAtq -d "$conn" -c "SELECT set_config('memory_fabric.tenant_id', 'acme', false)" \
  -c "SELECT reviewer FROM memory_fabric.review_candidate('$cid')" > /dev/null
rc=0; wait $rpid || rc=$?
cat "$out/reviewer.txt"
promoted=$(mf_psql -d $db -At -c "SELECT count(*) FROM memory_fabric.promoted_memory WHERE candidate_id = '$cid' AND promoted_by = 'op:ana'")
if [ $rc = 0 ] && [ "$promoted" = 1 ] && grep -q '^notification: ' "$out/reviewer.txt"; then
  echo "ok - examples/python/reviewer.py approved the queued candidate on its notification"
else
  echo "not ok - examples/python/reviewer.py (rc=$rc, promoted=$promoted, see $out/reviewer.txt)"
fi
mf_psql -d postgres -q -c "DROP DATABASE $db WITH (FORCE)"
