#!/usr/bin/env bash
# The memory_fabric benchmark. One command, after the README's set-up:
#   bash bench/run.sh                      # 10k, 100k and 1M memories, 1/4/16 clients
#   bash bench/run.sh --sizes 10000,100000 --clients 1,4 --seconds 10
#   bash bench/run.sh --smoke              # seconds: 2k memories, 1 client (what CI runs)
#   bash bench/run.sh --sizes 1000000 --load-only   # load (and index) only, to measure later
#   bash bench/run.sh --sizes 1000000 --reuse       # measure on what is loaded, loading only the rest
#   bash bench/run.sh --hnsw               # the bench model with an HNSW index (create_embedding_index)
# Every measured operation calls the public functions as an ordinary role (bench_agent) with
# row-level security on; loading uses COPY. Results: bench/results/<date>/ and BENCHMARKS.md.
set -euo pipefail
# the tests' installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
sizes=10000,100000,1000000 clients=1,4,16 seconds=20 smoke=0 release=1 txns=100 reuse=0 load_only=0 hnsw=0
db=memory_fabric_bench
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --smoke) smoke=1; sizes=2000; clients=1; seconds=2; txns=20; release=0; db=memory_fabric_bench_smoke; shift ;;
    --reuse) reuse=1; shift ;;
    --load-only) load_only=1; shift ;;
    --hnsw) hnsw=1; shift ;;
    --db) db=$2; shift 2 ;;
    --debug-build) release=0; shift ;;
    *) echo "usage: $0 [--sizes N,N] [--clients N,N] [--seconds S] [--smoke] [--reuse] [--load-only] [--hnsw] [--db NAME]" >&2; exit 2 ;;
  esac
done
cd "$MF_ROOT"
out=$MF_ROOT/bench/results/$(date -u +%Y%m%dT%H%M%SZ); [ $smoke = 1 ] && out=$MF_BUILD/bench-smoke
rm -rf "$out"; mkdir -p "$out"; chmod 777 "$out"
mf_log "building (release=$release)"
if [ $release = 1 ]; then
  bash scripts/install.sh --release > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
else
  bash scripts/install.sh > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
fi
cargo build -q --release -p memory_fabric_bench
if [ $smoke = 0 ]; then
  python3 -c "import matplotlib, psycopg" 2>/dev/null || python3 -m pip install -q matplotlib "psycopg[binary]"
fi
gen=$MF_ROOT/target/release/mf-bench-gen
bash scripts/cluster.sh start
psql_() { mf_psql -q -X "$@"; }
if [ $smoke = 0 ]; then
  # A server sized for the data (8 GB of this machine's 23 GiB holds the 1M working set: the
  # promoted rows, their indexes and the HNSW graph), as production would be, listening on TCP
  # loopback too for the app-side baseline.
  if [ "$(psql_ -At -d postgres -c 'SHOW shared_buffers')" != 8GB ] || [ "$(psql_ -At -d postgres -c 'SHOW listen_addresses')" != 127.0.0.1 ]; then
    psql_ -d postgres -c "ALTER SYSTEM SET shared_buffers = '8GB'" -c "ALTER SYSTEM SET listen_addresses = '127.0.0.1'"
    bash scripts/cluster.sh stop; bash scripts/cluster.sh start
  fi
fi
psql_ -At -d postgres -c "SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'maintenance_work_mem', 'effective_cache_size', 'synchronous_commit', 'fsync', 'jit') ORDER BY name" > "$out/settings.txt"
loaded=0
if [ $reuse = 1 ] && [ "$(psql_ -At -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 1 ]; then
  # the library just installed may be newer than the schema the data was loaded with
  psql_ -d $db -c "ALTER EXTENSION memory_fabric UPDATE"
  loaded=$(psql_ -At -d $db -c "SELECT count(*) FROM memory_fabric.candidates WHERE id LIKE 'mc\_bench\_%'")
  mf_log "reusing $db: $loaded memories loaded"
else
  psql_ -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
fi
psql_ -d $db -f bench/sql/setup.sql > /dev/null
# this run's number on the database: a reused one draws fresh facts no earlier run promoted
run=$(psql_ -At -d $db -c "INSERT INTO bench.runs (n) SELECT coalesce(max(n) + 1, 0) FROM bench.runs RETURNING n")
nprobes=$([ $smoke = 1 ] && echo 1000 || echo 20000)
nreview=$([ $smoke = 1 ] && echo 100 || echo 2000)
njudge=$([ $smoke = 1 ] && echo 200 || echo 2000)
csum=0; for c in ${clients//,/ }; do csum=$((csum + c)); done
npromote=$(( txns * csum + (smoke ? 20 : 200) ))
results=$out/results.tsv
printf 'size\top\tclients\ttps\tp50_ms\tp95_ms\tp99_ms\ttxns\terrors\n' > "$results"

bench_op() { # size op clients [-T secs | -t txns] user
  local size=$1 op=$2 c=$3 mode=$4 n=$5 user=$6 j
  j=$(( c < 2 ? c : 2 ))
  local log=$out/logs/$size-$op-$c; mkdir -p "$log"
  local rc=0
  (cd "$log" && "$MF_PG_BINDIR/pgbench" -n -h "$MF_PGHOST" -p "$MF_PGPORT" -U "$user" -d $db \
      -f "$MF_ROOT/bench/sql/$op.sql" -c "$c" -j "$j" "$mode" "$n" -D npairs=$((nprobes / 2)) -D nreview=$nreview -D njudge=$njudge \
      -l --log-prefix=tx > summary.txt 2>&1) || rc=$?
  python3 "$MF_ROOT/bench/percentiles.py" "$size" "$op" "$c" "$log" >> "$results" || true
  if [ $rc != 0 ]; then mf_log "pgbench $op c=$c failed (rc=$rc), see $log/summary.txt"; tail -5 "$log/summary.txt" >&2; fi
}

# the bench model's HNSW index, if it has one
model_index="FROM pg_catalog.pg_indexes WHERE schemaname = 'memory_fabric' AND tablename = 'promoted_memory'
  AND indexdef LIKE '%''bench-384''%'"
drop_model_index="SELECT format('DROP INDEX memory_fabric.%I', indexname) $model_index \\gexec"
for size in ${sizes//,/ }; do
  changed=0
  if [ "$size" -lt "$loaded" ]; then
    mf_log "$db holds $loaded memories, more than $size: run without --reuse"; exit 2
  elif [ "$size" -gt "$loaded" ]; then
    mf_log "loading to $size memories"
    cols="id, tenant_id, user_id, intent_id, source, text, classification, embedding, embedding_model, content_hash, policy_version"
    "$gen" memories $loaded "$size" > "$out/candidates.copy"
    psql_ -d $db -c "\\copy memory_fabric.candidates ($cols) FROM '$out/candidates.copy'"
    # the baseline table holds the same rows, so a plain INSERT maintains indexes of the same size
    psql_ -d $db -c "\\copy bench.plain_candidates ($cols) FROM '$out/candidates.copy'"
    rm -f "$out/candidates.copy"
    # with --hnsw, the bulk promotion would otherwise insert every row into the HNSW graph one by
    # one (on 10k -> 100k that took over 7 minutes); the model's index is dropped and made again
    # right after by memory_fabric.create_embedding_index(), as a user of a model of their own would
    echo "$drop_model_index" | psql_ -d $db
    psql_ -d $db -f bench/sql/promote_loaded.sql > /dev/null
    loaded=$size
    changed=1
  fi
  # No model has an HNSW index by default (sql/schema.sql); --hnsw measures the bench model with one.
  has_index=$(psql_ -At -d $db -c "SELECT count(*) $model_index")
  if [ $hnsw = 1 ] && [ "$has_index" = 0 ]; then
    mf_log "indexing"
    psql_ -d $db -c "SET maintenance_work_mem = '6GB'" -c "SET max_parallel_maintenance_workers = 1" \
      -c "SELECT memory_fabric.create_embedding_index('bench-384', 384)"
    changed=1
  elif [ $hnsw = 0 ] && [ "$has_index" != 0 ]; then
    echo "$drop_model_index" | psql_ -d $db
    changed=1
  fi
  if [ $changed = 1 ]; then
    # nothing left for autovacuum to do while the clock runs
    psql_ -d $db -c "VACUUM ANALYZE memory_fabric.promoted_memory" -c "VACUUM ANALYZE memory_fabric.candidates" \
      -c "VACUUM ANALYZE memory_fabric.reviews" -c "VACUUM ANALYZE bench.plain_candidates" -c "CHECKPOINT"
  fi
  if [ $load_only = 1 ]; then continue; fi
  # a warm cache, as a running server has: the promoted rows, their indexes, the HNSW graph, then
  # the candidates (pg_prewarm reads each into shared buffers until they are full)
  psql_ -d $db -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" \
    -c "SELECT count(*) FROM (SELECT pg_prewarm(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'memory_fabric' AND c.relkind IN ('r', 'i') AND (c.relname LIKE 'promoted%' OR c.relname LIKE 'candidates%') ORDER BY c.relname LIKE 'candidates%', c.oid) w" > /dev/null
  psql_ -d $db -c "TRUNCATE bench.probes"
  "$gen" probes $((nprobes / 2)) "$size" "$run" > "$out/probes.copy"
  psql_ -d $db -c "\\copy bench.probes FROM '$out/probes.copy'"
  # every transaction draws a probe id in 1..nprobes (odd: a near-duplicate, even: a fresh fact)
  [ "$(psql_ -At -d $db -c "SELECT count(*) = $nprobes AND min(id) = 1 AND max(id) = $nprobes FROM bench.probes")" = t ] \
    || { mf_log "bench.probes does not hold ids 1..$nprobes"; exit 1; }
  psql_ -d $db -v nreview=$nreview -v npromote=$npromote -v njudge=$njudge -f bench/sql/pools.sql
  for c in ${clients//,/ }; do
    for op in capture_vec plain_insert capture_text review review_judged recall_noquery recall_vec recall_text; do
      bench_op "$size" "$op" "$c" -T "$seconds" bench_agent
    done
    bench_op "$size" exact_scan "$c" -T "$seconds" "$MF_PGUSER"
    bench_op "$size" promote "$c" -t "$txns" bench_agent
    bench_op "$size" pipeline "$c" -t "$txns" bench_agent
  done
  mf_log "recall@1"
  r_default=$(psql_ -At -d $db -f bench/sql/recall_at_1.sql)
  r_index=-
  if [ $hnsw = 1 ]; then
    psql_ -d $db -c "SET memory_fabric.exact_search_limit = 0" -c "SELECT count(*) FROM bench.review_pool rp, memory_fabric.review_candidate(rp.candidate_id) r" > /dev/null
    r_index=$(psql_ -At -d $db -f bench/sql/recall_at_1.sql)
  fi
  printf '%s\t%s\t%s\n' "$size" "$r_default" "$r_index" >> "$out/recall_at_1.tsv"
  mf_log "recall@8"
  printf '%s\t%s\n' "$size" "$(psql_ -At -d $db -f bench/sql/recall_at_8.sql)" >> "$out/recall_at_8.tsv"
  if [ $smoke = 0 ]; then
    python3 bench/app_side.py --host 127.0.0.1 --port "$MF_PGPORT" --user "$MF_PGUSER" --db $db --size "$size" --n 200 >> "$results" || mf_log "app-side baseline failed"
  fi
  psql_ -At -d $db -c "SELECT '$size', sum(n), count(*), max(n), percentile_disc(0.5) WITHIN GROUP (ORDER BY n) FROM (SELECT tenant_id, count(*) n FROM memory_fabric.promoted_memory GROUP BY 1) t" >> "$out/dataset.tsv"
done
if [ $load_only = 1 ]; then mf_log "loaded $loaded memories into $db"; exit 0; fi
python3 bench/report.py "$out" $([ $smoke = 1 ] && echo --smoke)
mf_log "results in $out"
