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
SQL
conn="host=$MF_PGHOST port=$MF_PGPORT dbname=$db user=memory_fabric_example_app"

# Python: psycopg 3 and the pgvector package
python3 -m pip install -q --root-user-action=ignore -r "$MF_ROOT/examples/python/requirements.txt"
if python3 "$MF_ROOT/examples/python/memory_agent.py" "$conn"; then
  echo "ok - examples/python/memory_agent.py"
else
  echo "not ok - examples/python/memory_agent.py"
fi
mf_psql -d postgres -q -c "DROP DATABASE $db WITH (FORCE)"
