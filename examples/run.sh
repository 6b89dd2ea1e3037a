#!/usr/bin/env bash
# Runs the client examples against the local cluster, each as ordinary roles, and reports one
# TAP line per example (each exits non-zero on a wrong result). An example is a directory here
# with a run.sh, which installs the example's pinned dependencies (its own manifest) and runs it.
#   bash examples/run.sh                 # every example
#   bash examples/run.sh python rust     # the ones named
#
# Each example gets a fresh database with the extension, the examples' embedding model
# (example/hash-64, 64 dimensions) registered for tenant 'acme', and three login roles, granted tenant
# 'acme': memory_fabric_example_app (memory_fabric_agent), memory_fabric_example_reviewer
# (memory_fabric_reviewer) and memory_fabric_example_writer (memory_fabric_reviewer: an operator
# who writes facts; four eyes needs the approver to be another role). It finds them in the libpq
# environment: PGHOST, PGPORT, PGDATABASE, PGUSER (the agent), MF_EXAMPLE_REVIEWER and
# MF_EXAMPLE_WRITER (role names).
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
out=$MF_BUILD/examples; mkdir -p "$out"
only=("$@")

mf_psql -d postgres -q -o /dev/null <<'SQL'
SET client_min_messages = warning;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_example_app') THEN
        CREATE ROLE memory_fabric_example_app LOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_example_reviewer') THEN
        CREATE ROLE memory_fabric_example_reviewer LOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_example_writer') THEN
        CREATE ROLE memory_fabric_example_writer LOGIN;
    END IF;
END $$;
SQL

fresh_db() { # name
  mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1"
  mf_psql -d "$1" -q -o /dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION memory_fabric CASCADE;
GRANT memory_fabric_agent TO memory_fabric_example_app;
GRANT memory_fabric_reviewer TO memory_fabric_example_reviewer, memory_fabric_example_writer;
SELECT memory_fabric.grant_tenant('memory_fabric_example_app', 'acme');
SELECT memory_fabric.grant_tenant('memory_fabric_example_reviewer', 'acme');
SELECT memory_fabric.grant_tenant('memory_fabric_example_writer', 'acme');
-- the examples bring their own vectors: a tenant admin accepts that model for the tenant
SELECT memory_fabric.register_embedding_model('acme', 'example/hash-64', 64);
SQL
}

for dir in "$MF_ROOT"/examples/*/; do
  name=$(basename "$dir")
  [ -f "$dir/run.sh" ] || continue
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
  db=memory_fabric_example_$name
  fresh_db "$db"
  rc=0
  env PGHOST="$MF_PGHOST" PGPORT="$MF_PGPORT" PGDATABASE="$db" PGUSER=memory_fabric_example_app \
      MF_EXAMPLE_REVIEWER=memory_fabric_example_reviewer MF_EXAMPLE_WRITER=memory_fabric_example_writer MF_EXAMPLE_BUILD="$out/$name" MF_PG_BINDIR="$MF_PG_BINDIR" \
      bash "$dir/run.sh" > "$out/$name.log" 2>&1 || rc=$?
  sed 's/^/    /' "$out/$name.log"
  if [ $rc = 0 ]; then
    echo "ok - examples/$name"
  else
    echo "not ok - examples/$name (exit $rc, log $out/$name.log)"
  fi
  mf_psql -d postgres -q -c "DROP DATABASE $db WITH (FORCE)"
done
