#!/usr/bin/env bash
# The long reliability runs, one after the other (about 20 minutes on 2 cores). scripts/test.sh
# runs each of them briefly; this runs them at length and prints what each held.
#   bash tests/long.sh
#   CLIENTS=16 SECONDS_LOAD=120 CALLS=5000 CYCLES=5 CASES=20000 bash tests/long.sh   # shorter
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
clients=${CLIENTS:-32} seconds=${SECONDS_LOAD:-300} calls=${CALLS:-20000} cycles=${CYCLES:-10} cases=${CASES:-50000}
bash "$MF_ROOT/scripts/setup.sh"
bash "$MF_ROOT/scripts/install.sh" > "$MF_BUILD/logs/long-install.log" 2>&1
bash "$MF_ROOT/scripts/cluster.sh" start
python3 -c "import psycopg" 2>/dev/null || python3 -m pip install -q "psycopg[binary]"
mf_log "load: $clients clients for $seconds s"
bash "$MF_ROOT/tests/load/run.sh" --clients "$clients" --seconds "$seconds"
mf_log "hostile input: $calls calls"
python3 "$MF_ROOT/tests/hostile/run.py" --host "$MF_PGHOST" --port "$MF_PGPORT" --user "$MF_PGUSER" --calls "$calls" --seed 7
mf_log "kill -9: $cycles crashes"
MF_CRASH_CYCLES=$cycles MF_CRASH_CLIENTS=8 bash "$MF_ROOT/tests/tap/run.sh" t/001_crash.pl
mf_log "property tests: $cases cases each"
PROPTEST_CASES=$cases cargo test -q -p memory_fabric_core --test properties
