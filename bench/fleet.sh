#!/usr/bin/env bash
# The router's cost and the fleet's throughput (issue 33, router/DESIGN.md §9). One command:
#   bash bench/fleet.sh                       # 20 s per point, 2 rounds
#   bash bench/fleet.sh --seconds 5 --rounds 1  # a quick look
# Starts a throwaway 4-shard fleet of its own (MF_FLEET_BENCH_DIR, default $MF_STATE/fleet-bench;
# ports from MF_FLEET_BENCH_PORT, default 56600), makes a role (fb_agent, an ordinary agent, on
# every node) and tenants placed explicitly in the router's directory, then with pgbench
# (bench/fleet/sql, -M prepared, per-transaction logs):
#  1. latency, 1 client, alternately in each round: every operation directly on its shard (pinned
#     with set_config, as the router's shard wrapper pins it) and through the router: capture, the
#     pipeline (capture -> review_candidate -> promote; through the router three routed calls),
#     recall by text, recall without a query, review_status (a trivial call); and the embedder
#     alone on the shard (memory_fabric._embed_query, as the superuser: it is internal);
#  2. throughput of the pipeline, 16 clients (-j 2), each client on a tenant of its own, the 16
#     tenants placed on 1, 2 or 4 shards, through the router; and the same 16 clients directly on
#     one shard as the baseline; the CPU seconds of each node, of pgbench and of the rest of the
#     machine meanwhile (bench/fleet/cpu.py).
# Prints a Markdown section for BENCHMARKS.md; results in bench/results/fleet-<date>/. The fleet
# is stopped and removed at the end (--keep keeps it).
set -euo pipefail
# the tests' installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
seconds=20 rounds=2 keep=0 nusers=200
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--seconds S] [--rounds R] [--keep]" >&2; exit 2 ;;
  esac
done
cd "$MF_ROOT"
export MF_FLEET_DIR=${MF_FLEET_BENCH_DIR:-$MF_STATE/fleet-bench}
export MF_FLEET_PORT=${MF_FLEET_BENCH_PORT:-56600}
fleet() { bash "$MF_ROOT/scripts/fleet.sh" "$@"; }
cleanup() {
  local rc=$?
  if [ $keep = 0 ]; then fleet stop >/dev/null 2>&1 || true; rm -rf "$MF_FLEET_DIR"; fi
  exit $rc
}
trap cleanup EXIT
if [ -d "$MF_FLEET_DIR" ]; then fleet stop >/dev/null 2>&1 || true; rm -rf "$MF_FLEET_DIR"; fi
fleet start --shards 4 2>&1 | tail -1
eval "$(fleet env)"
out=$MF_ROOT/bench/results/fleet-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"; chmod 777 "$out"
nodes=router,shard0,shard1,shard2,shard3
port_of() { case $1 in router) echo "$MF_FLEET_PORT" ;; shard*) echo $(( MF_FLEET_PORT + 1 + ${1#shard} )) ;; esac; }
sql() { fleet psql "$@"; }

mf_log "roles and tenants"
for n in ${nodes//,/ }; do
  sql "$n" -c "DO \$\$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fb_agent') THEN
                 CREATE ROLE fb_agent LOGIN IN ROLE memory_fabric_agent; END IF; END \$\$"
done
# fb_lat on shard 0 (latency); tpS_i (i < 16) on shard i % S (throughput over S shards); tdir_i on
# shard 0 (the direct baseline). The grants go through the router, each to the tenant's shard.
sql router <<'SQL'
INSERT INTO memory_fabric_router.tenants (tenant_id, shard)
SELECT 'fb_lat', 0
UNION ALL SELECT 'tp' || s || '_' || i, i % s FROM unnest(ARRAY[1, 2, 4]) s, generate_series(0, 15) i
UNION ALL SELECT 'tdir_' || i, 0 FROM generate_series(0, 15) i
ON CONFLICT (tenant_id) DO UPDATE SET shard = excluded.shard;
SELECT count(memory_fabric.grant_tenant('fb_agent', tenant_id)) AS grants FROM memory_fabric_router.tenants;
SQL
model=$(sql shard0 -Atc "SELECT set_config('memory_fabric.tenant_id', 'fb_lat', false);
  SELECT embedding_model FROM memory_fabric.capture_memory('fb_lat', 'Model probe.', 'agent', 'INTERNAL')" | tail -1)
mf_log "capture embeds with $model (what the fleet installs by default)"

mf_log "seeding $nusers promoted memories for fb_lat (recall's data)"
sql shard0 -U fb_agent -v n=$nusers <<'SQL' > /dev/null
BEGIN;
SELECT set_config('memory_fabric.tenant_id', 'fb_lat', true);
SELECT count(p.id)
FROM generate_series(1, :n) g,
     LATERAL memory_fabric.capture_memory('fb_lat',
        'Customer u' || g || ' wants to be contacted by ' || (ARRAY['email', 'phone', 'letter', 'chat'])[1 + g % 4]
          || ' about ' || (ARRAY['invoices', 'deliveries', 'the renewal', 'refunds', 'outages'])[1 + g % 5] || '.',
        'agent', 'INTERNAL', user_id => 'u' || g, intent_id => 'support') c,
     LATERAL memory_fabric.review_candidate(c.id) r,
     LATERAL memory_fabric.promote(c.id) p;
COMMIT;
SQL
cid=$(sql shard0 -Atc "SELECT id FROM memory_fabric.candidates WHERE tenant_id = 'fb_lat' AND user_id = 'u1'")
sql shard0 -c "VACUUM ANALYZE" -c CHECKPOINT > /dev/null

results=$out/latency.tsv
printf 'round\top\tmode\tdir\n' > "$results"
pgb() {  # dir node user script [pgbench args…]
  local dir=$1 node=$2 user=$3 script=$4; shift 4
  mkdir -p "$dir"
  (cd "$dir" && "$MF_PG_BINDIR/pgbench" -n -h "$MF_FLEET_SOCK" -p "$(port_of "$node")" -U "$user" -d "$MF_FLEET_DB" \
     -M prepared -f "$MF_ROOT/bench/fleet/sql/$script.sql" -D tenant=fb_lat -D prefix=- -D nusers=$nusers -D cid="$cid" \
     "$@" > summary.txt 2>&1) || { mf_log "pgbench $script on $node failed: $dir/summary.txt"; tail -5 "$dir/summary.txt" >&2; return 1; }
}

mf_log "warm-up"
for op in capture pipeline pipeline_split recall recall_noquery review_status; do
  for node in shard0 router; do pgb "$out/warmup/$op-$node" "$node" fb_agent "$op" -c 1 -t 10; done
done
pgb "$out/warmup/embed" shard0 "$MF_PGUSER" embed -c 1 -t 10

mf_log "latency, 1 client, $seconds s a point, $rounds rounds"
for ((r = 1; r <= rounds; r++)); do
  for op in capture pipeline pipeline_split recall recall_noquery review_status; do
    for mode in direct routed; do
      node=$([ $mode = direct ] && echo shard0 || echo router)
      d=$out/lat/$op-$mode-r$r
      pgb "$d" "$node" fb_agent "$op" -c 1 -j 1 -T "$seconds" -l --log-prefix=tx
      printf '%s\t%s\t%s\t%s\n' "$r" "$op" "$mode" "$d" >> "$results"
    done
  done
  d=$out/lat/embed-direct-r$r
  pgb "$d" shard0 "$MF_PGUSER" embed -c 1 -j 1 -T "$seconds" -l --log-prefix=tx
  printf '%s\t%s\t%s\t%s\n' "$r" embed direct "$d" >> "$results"
done

mf_log "throughput of the pipeline, 16 clients, $seconds s a point"
export -f pgb port_of mf_log
export MF_PG_BINDIR MF_FLEET_SOCK MF_FLEET_PORT MF_FLEET_DB MF_ROOT nusers cid
tput=$out/throughput.tsv
printf 'point\tshards\tmode\tdir\n' > "$tput"
# the router's own split of each routed call's time (track_functions: the plpgsql function of the
# API's name, its _route and shard_for, and the PL/Proxy call that waits for the shard)
sql router -c "ALTER SYSTEM SET track_functions = 'all'" -c "SELECT pg_reload_conf()" > /dev/null
for s in direct 1 2 4; do
  if [ $s = direct ]; then node=shard0 prefix=tdir_ shards=1 mode=direct; else node=router prefix=tp${s}_ shards=$s mode=routed; fi
  d=$out/tput/$s
  mkdir -p "$d"
  sql router -c "SELECT pg_stat_reset()" > /dev/null
  python3 bench/fleet/cpu.py "$MF_FLEET_DIR" "$nodes" "$d/cpu.json" -- \
    bash -c "pgb '$d/pg' $node fb_agent pipeline -c 16 -j 2 -T $seconds -l --log-prefix=tx -D tenant=- -D prefix=$prefix"
  sleep 0.6  # the statistics collector's last report
  sql router -A -F $'\t' -c "SELECT schemaname || '.' || funcname AS function, calls, total_time, self_time
    FROM pg_stat_user_functions WHERE schemaname IN ('memory_fabric', 'memory_fabric_router') ORDER BY total_time DESC" > "$d/functions.tsv"
  printf '%s\t%s\t%s\t%s\n' "$s" "$shards" "$mode" "$d" >> "$tput"
done
sql router -c "ALTER SYSTEM RESET track_functions" -c "SELECT pg_reload_conf()" > /dev/null
# where the tenants' rows went: the pipeline's promotions per shard
for k in 0 1 2 3; do
  printf 'shard%s\t%s\n' "$k" "$(sql shard$k -Atc "SELECT count(*) FROM memory_fabric.promoted_memory")"
done > "$out/rows.tsv"
git rev-parse --short HEAD > "$out/commit.txt" 2>/dev/null || true
python3 bench/fleet/report.py "$out" --model "$model" --seconds "$seconds" --rounds "$rounds" | tee "$out/report.md"
mf_log "results in $out"
