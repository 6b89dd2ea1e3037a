#!/usr/bin/env bash
# The operator's console under a full queue (bench/console.py): builds the console (release),
# seeds 1,000 candidates waiting for a human in a database of its own on the local cluster,
# starts the console against it, and measures the queue page against its own queries as a
# baseline in the same run. Prints a Markdown section for BENCHMARKS.md.
#   bash bench/console.sh [--rows N] [--requests N]
set -euo pipefail
# the tests' installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
. "$MF_ROOT/clients/python/tests/env.sh"
cd "$MF_ROOT"
args=("$@")
cargo build --release -q -p memory-fabric-console
bash scripts/cluster.sh start >/dev/null
admin="host=$MF_PGHOST port=$MF_PGPORT user=$MF_PGUSER"
"$MF_PY" bench/console.py --admin "$admin" --base unused --seed-only "${args[@]}"
port=$("$MF_PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$MF_BUILD/bench-console.log
./target/release/memory-fabric-console --listen "127.0.0.1:$port" \
  --dsn "host=$MF_PGHOST port=$MF_PGPORT dbname=memory_fabric_bench_console" > "$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
"$MF_PY" bench/console.py --admin "$admin" --base "http://127.0.0.1:$port" "${args[@]}"
