#!/usr/bin/env bash
# What the audit hash chain costs (0.20.0): promote() alone and the whole pipeline (capture with the
# hashing embedder, review, promote), one tenant, as an ordinary role, with the chain's trigger on
# and off in alternating rounds of the same run (release build, the tests' tree and cluster).
#   bash bench/audit.sh [--seconds S] [--rounds N]
# Prints the section of BENCHMARKS.md. (The rounds with the chain off leave rows outside the chain,
# which verify_audit then reports; the database is the benchmark's own.)
set -euo pipefail
# the tests' installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
seconds=10 rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds S] [--rounds N]" >&2; exit 2 ;;
  esac
done
cd "$MF_ROOT"
out=$MF_BUILD/bench-audit; rm -rf "$out"; mkdir -p "$out"; chmod 777 "$out"
mf_log "installing a release build"
bash scripts/install.sh --release > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
bash scripts/cluster.sh start >/dev/null
db=memory_fabric_bench_audit
q() { mf_psql -q -X -d "$db" "$@"; }
mf_psql -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
mf_psql -q -d "$db" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION memory_fabric CASCADE;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bench_audit_agent') THEN
    CREATE ROLE bench_audit_agent LOGIN IN ROLE memory_fabric_agent;
  END IF;
END $$;
SELECT count(*) FROM memory_fabric.grant_tenant('bench_audit_agent', 't_bench_audit');
-- the hashing embedder, so that the chain's cost is not lost in the semantic model's
ALTER DATABASE memory_fabric_bench_audit SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1';
CREATE SCHEMA bench;
GRANT USAGE ON SCHEMA bench TO bench_audit_agent;
CREATE TABLE bench.pool (n bigint PRIMARY KEY, candidate_id text NOT NULL);
CREATE SEQUENCE bench.pool_seq;
GRANT SELECT ON bench.pool TO bench_audit_agent;
GRANT USAGE ON SEQUENCE bench.pool_seq TO bench_audit_agent;
SQL
# candidates reviewed and waiting for promote(), each of its own user (one scope each)
per_round=2000
need=$(( rounds * 2 * per_round + 100 ))
mf_log "capturing and reviewing $need candidates for promote()"
q -c "SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1'" -c "
  INSERT INTO bench.pool
  SELECT g, (SELECT c.id FROM memory_fabric.capture_memory('t_bench_audit', 'Customer u' || g || ' asked about order ' || g || '.',
             'agent', 'INTERNAL', user_id => 'u' || g) c)
  FROM generate_series(1, $need) g;
  SELECT count(*) FROM bench.pool p, LATERAL memory_fabric.review_candidate(p.candidate_id) r;" >/dev/null
cat > "$out/promote.sql" <<'SQL'
BEGIN;
SELECT set_config('memory_fabric.tenant_id', 't_bench_audit', true);
SELECT (memory_fabric.promote(p.candidate_id)).tier FROM bench.pool p WHERE p.n = (SELECT nextval('bench.pool_seq'));
COMMIT;
SQL
cat > "$out/pipeline.sql" <<'SQL'
\set n random(1, 1000000000)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', 't_bench_audit', true);
SELECT (memory_fabric.promote(c.id)).tier
FROM memory_fabric.capture_memory('t_bench_audit', 'Visitor ' || :n || ' read the returns page.', 'agent', 'INTERNAL',
                                  user_id => 'p' || :n) c,
     LATERAL memory_fabric.review_candidate(c.id) r
WHERE r.status = 'pending_promotion' AND r.reviewer = 'auto';
COMMIT;
SQL
chain() { mf_psql -q -X -d "$db" -c "ALTER TABLE memory_fabric.events $1 TRIGGER audit_chain" \
                                  -c "ALTER TABLE memory_fabric.decisions $1 TRIGGER audit_chain" >/dev/null; }
results=$out/results.tsv
: > "$results"
run() { # op clients state round: promote() a fixed number of the pool's candidates, the pipeline for S seconds
  local op=$1 c=$2 state=$3 r=$4 log=$out/logs/$1-$2-$3-$4 how=(-T "$seconds")
  [ "$op" = promote ] && how=(-t "$per_round")
  mkdir -p "$log"
  (cd "$log" && "$MF_PG_BINDIR/pgbench" -n -h "$MF_PGHOST" -p "$MF_PGPORT" -U bench_audit_agent -d "$db" \
     -f "$out/$op.sql" -c "$c" -j "$(( c < 2 ? c : 2 ))" "${how[@]}" -l --log-prefix=tx > summary.txt 2>&1) \
     || { mf_log "pgbench $op failed"; tail -5 "$log/summary.txt" >&2; }
  python3 "$MF_ROOT/bench/percentiles.py" "$state" "$op" "$c" "$log" >> "$results"
}
for r in $(seq 1 "$rounds"); do
  for state in on off; do
    if [ $state = on ]; then chain "ENABLE ALWAYS"; else chain DISABLE; fi
    run promote 1 $state "$r"
    run pipeline 1 $state "$r"
    run pipeline 4 $state "$r"
  done
done
chain "ENABLE ALWAYS"
# medians over the rounds of each op, clients and state
python3 - "$results" "$seconds" "$rounds" <<'PY'
import sys, statistics, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
by = collections.defaultdict(list)
for state, op, c, tps, p50, p95, p99, n, err in rows:
    by[(op, int(c), state)].append((float(tps), float(p50), float(p95), int(err)))
print(f"| operation | clients | p50 chain on (ms) | p50 chain off (ms) | on / off | tps on | tps off | errors |")
print("|---|---|---|---|---|---|---|---|")
for op, c in [("promote", 1), ("pipeline", 1), ("pipeline", 4)]:
    on, off = by[(op, c, "on")], by[(op, c, "off")]
    p_on = statistics.median(x[1] for x in on); p_off = statistics.median(x[1] for x in off)
    t_on = statistics.median(x[0] for x in on); t_off = statistics.median(x[0] for x in off)
    err = sum(x[3] for x in on + off)
    print(f"| {op} | {c} | {p_on:.3f} | {p_off:.3f} | {p_on / p_off:.2f} | {t_on:.0f} | {t_off:.0f} | {err} |")
print(f"\n{sys.argv[3]} rounds, chain on and off alternately (promote: 2,000 calls a round; the pipeline: {sys.argv[2]} s a round); medians over the rounds.")
PY
