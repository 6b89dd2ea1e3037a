#!/usr/bin/env bash
# The fleet's failover test (router/HA.md, router/DESIGN.md §8): a throwaway 2-shard --ha fleet of
# its own (each shard a pg_auto_failover group; its own directory under $MF_STATE and its own ports,
# default 26800…26805, below the ephemeral port range (32768 up), since the nodes listen on
# 127.0.0.1 and a port there may be taken by an outgoing connection; so a developer's or a benchmark's fleet is not touched), then
# tests/fleet/test_ha_closed.sh (no OS user but the fleet's gets in) and tests/fleet/test_failover.py:
# kill -9 of shard 0's primary while clients write through the router.
# Everything is stopped and removed afterwards.
#   bash tests/fleet/run_ha.sh        (needs memory_fabric installed: cargo pgrx install; TAP output)
# MF_FLEET_KEEP=1 keeps the fleet for a look (scripts/fleet.sh status|psql with the same MF_FLEET_*).
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
. "$MF_ROOT/clients/python/tests/env.sh"
export MF_FLEET_DIR=${MF_FLEET_HA_TEST_DIR:-$MF_STATE/fleet-ha-test}
export MF_FLEET_PORT=${MF_FLEET_HA_TEST_PORT:-26800}   # below the ephemeral port range: the nodes listen on TCP
fleet() { bash "$MF_ROOT/scripts/fleet.sh" "$@"; }
purge() { fleet stop || true; rm -rf "$MF_FLEET_DIR"; }
cleanup() {
  local rc=$?
  [ "${MF_FLEET_KEEP:-0}" = 1 ] || purge
  exit $rc
}
trap cleanup EXIT
if [ -d "$MF_FLEET_DIR" ] && [ "${MF_FLEET_KEEP:-0}" != 1 ]; then purge; fi
t0=$SECONDS
if fleet start --ha --shards 2; then echo "ok - fleet start --ha --shards 2 ($(( SECONDS - t0 )) s)"
else echo "not ok - fleet start --ha --shards 2"; exit 1; fi
if fleet start >/dev/null 2>&1; then echo "ok - a second start (no --ha) keeps the HA fleet and changes nothing"
else echo "not ok - a second start"; rc=1; fi
if fleet status >/dev/null; then echo "ok - fleet status: router and both groups up"; else echo "not ok - fleet status"; rc=1; fi
eval "$(fleet env)"
export MF_PG_BINDIR MF_PGUSER MF_ROOT
# nobody but the fleet's OS user gets in (issue 39, item 2)
bash "$MF_ROOT/tests/fleet/test_ha_closed.sh" || rc=1
"$MF_PY" "$MF_ROOT/tests/fleet/test_failover.py" || rc=1
fleet status || true
exit ${rc:-0}
