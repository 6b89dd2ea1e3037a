#!/usr/bin/env bash
# The fleet's first test (router/DESIGN.md): a throwaway 2-shard fleet of its own (its own
# directory under $MF_STATE and its own ports, so a developer's fleet is not touched), the
# router checks of test_router.py, the read-only transactions, gates and roles, the tenant moves of
# test_move.py and the extensions' upgrade through it, then everything stopped and removed.
#   bash tests/fleet/run.sh            (needs memory_fabric installed: cargo pgrx install)
# Set MF_FLEET_KEEP=1 to keep the fleet afterwards for a look (scripts/fleet.sh status|psql).
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
. "$MF_ROOT/clients/python/tests/env.sh"
export MF_FLEET_DIR=${MF_FLEET_TEST_DIR:-$MF_STATE/fleet-test}
export MF_FLEET_PORT=${MF_FLEET_TEST_PORT:-56500}
fleet() { bash "$MF_ROOT/scripts/fleet.sh" "$@"; }
cleanup() {
  local rc=$?
  if [ "${MF_FLEET_KEEP:-0}" != 1 ]; then
    fleet stop || true
    rm -rf "$MF_FLEET_DIR"
  fi
  exit $rc
}
trap cleanup EXIT
# the router's generated scripts are those of the memory_fabric this build installs: every public
# function routed, with its signature (router/gen.py --check against a scratch database)
mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS mf_router_check" -c "CREATE DATABASE mf_router_check"
mf_psql -d mf_router_check -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE"
if python3 "$MF_ROOT/router/gen.py" --check "host=$MF_PGHOST port=$MF_PGPORT user=$MF_PGUSER dbname=mf_router_check"; then
  echo "ok - router/ is generated from this build's memory_fabric"
else
  echo "not ok - router/ is generated from this build's memory_fabric"; gen_rc=1
fi
mf_psql -d postgres -q -c "DROP DATABASE mf_router_check"
if [ -d "$MF_FLEET_DIR" ] && [ "${MF_FLEET_KEEP:-0}" != 1 ]; then fleet stop || true; rm -rf "$MF_FLEET_DIR"; fi
fleet start --shards 2
fleet start --shards 2     # idempotent: a second start changes nothing
fleet status
eval "$(fleet env)"
export MF_PG_BINDIR MF_PGUSER
export PYTHONPATH=$MF_ROOT/tests/fleet${PYTHONPATH:+:$PYTHONPATH}
"$MF_PY" "$MF_ROOT/tests/fleet/test_router.py" || rc=1
# capture, review and promote in one shard transaction (router/DESIGN.md §6)
"$MF_PY" "$MF_ROOT/tests/fleet/test_pipeline.py" || rc=1
# writes in read-only router transactions: refused, and drained by a move whatever the mode (§2, §7)
"$MF_PY" "$MF_ROOT/tests/fleet/test_readonly.py" || rc=1
# no role without a grant holds a tenant's gate or reads the directory (§4, §7)
"$MF_PY" "$MF_ROOT/tests/fleet/test_gates.py" || rc=1
# SET ROLE, SESSION AUTHORIZATION, search_path tricks and odd tenant ids still hold
"$MF_PY" "$MF_ROOT/tests/fleet/test_held.py" || rc=1
# moving a tenant between the shards under load (router/DESIGN.md §7)
"$MF_PY" "$MF_ROOT/tests/fleet/test_move.py" || rc=1
# the router's roles on every shard (§3)
"$MF_PY" "$MF_ROOT/tests/fleet/test_roles.py" || rc=1
# 0.1.0 updated to 0.2.0 is 0.2.0 installed fresh (§1)
"$MF_PY" "$MF_ROOT/tests/fleet/test_upgrade.py" || rc=1
# a third shard added to the running fleet moves no tenant, and gets the roles
"$MF_PY" "$MF_ROOT/tests/fleet/test_add_shard.py" || rc=1
exit $(( ${gen_rc:-0} | ${rc:-0} ))
