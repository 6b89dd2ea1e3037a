#!/usr/bin/env bash
# The built-in embedders, measured: the forward pass alone beside the sgemm rate of this machine
# (core/examples/embed_bench.rs, release build, one thread), then capture without a vector and
# recall by query_text through the public functions, as an ordinary role with row-level security
# on, with each built-in model. One client, on the running cluster, after installing a release
# build of the extension (as bench/run.sh does; a test run puts the development build back).
#   bash bench/embedders.sh [--transactions N]
# Prints a Markdown section for BENCHMARKS.md.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
txns=300
[ "${1:-}" = --transactions ] && txns=$2
cd "$MF_ROOT"
mf_log "installing a release build"
cargo pgrx install --release --pg-config "$MF_PG_CONFIG" > "$MF_BUILD/bench-embedders-install.log" 2>&1 \
  || { cat "$MF_BUILD/bench-embedders-install.log"; exit 1; }
bash "$MF_ROOT/scripts/cluster.sh" restart >/dev/null
dir=$("$MF_PG_CONFIG" --sharedir)/extension/memory_fabric/all-MiniLM-L6-v2
cargo build --release -q -p memory_fabric_core --example embed_bench
raw=$(./target/release/examples/embed_bench "$dir")
v() { awk -F': ' -v k="$1" '$1 == k {print $2}' <<<"$raw"; }

db=memory_fabric_bench_embedders
out=$MF_BUILD/bench-embedders; rm -rf "$out"; mkdir -p "$out"; chmod 777 "$out"
mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
mf_psql -d "$db" -q <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION memory_fabric CASCADE;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bench_embed_agent') THEN
    CREATE ROLE bench_embed_agent LOGIN IN ROLE memory_fabric_agent;
  END IF;
END $$;
SELECT count(*) FROM memory_fabric.grant_tenant('bench_embed_agent', 't_embed');
SQL
# 20-token sentences (one per transaction, varied so nothing is cached)
cat > "$out/capture.sql" <<'SQL'
\set n random(1, 1000000)
SET memory_fabric.tenant_id = 't_embed';
SELECT id FROM memory_fabric.capture_memory('t_embed', 'Customer number ' || :n || ' asked us to send every invoice and order update to the billing email address only.', 'agent', 'INTERNAL');
SQL
cat > "$out/recall.sql" <<'SQL'
\set n random(1, 1000000)
SET memory_fabric.tenant_id = 't_embed';
SELECT count(*) FROM memory_fabric.recall('t_embed', NULL, query_text => 'where should the invoices of customer ' || :n || ' be sent, and by which channel?');
SQL
run() { # model, script → "p50 p95 tps" (latencies in ms, from bench/percentiles.py)
  mf_psql -d "$db" -q -c "ALTER ROLE bench_embed_agent SET memory_fabric.builtin_model = '$1'" >/dev/null
  local log=$out/$2-${1//\//_}; mkdir -p "$log"; chmod 777 "$log"
  (cd "$log" && "$MF_PG_BINDIR/pgbench" -n -h "$MF_PGHOST" -p "$MF_PGPORT" -U bench_embed_agent -c 1 -t "$txns" \
      -l --log-prefix=tx -f "$out/$2.sql" "$db" > summary.txt 2>&1)
  python3 "$MF_ROOT/bench/percentiles.py" 0 "$2" 1 "$log" | awk -F'\t' '{printf "%.2f %.2f %.0f\n", $5, $6, $4}'
}
ch=$(run memory_fabric/hash-384-v1 capture); cs=$(run sentence-transformers/all-MiniLM-L6-v2 capture)
rh=$(run memory_fabric/hash-384-v1 recall); rs=$(run sentence-transformers/all-MiniLM-L6-v2 recall)
mf_psql -d "$db" -q -c "ALTER ROLE bench_embed_agent RESET ALL" >/dev/null
mf_psql -d postgres -q -c "DROP DATABASE $db"

cat <<MD
## Built-in embedders

Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) with \`bash bench/embedders.sh\` on this 2-core machine.

The forward pass alone (\`core/examples/embed_bench.rs\`, release build, one thread):

| figure | value |
|---|---|
| a $(v tokens_20)-token text, p50 / p95 | $(v embed_20_p50_ms) / $(v embed_20_p95_ms) ms (target ≤ 8 ms p50) |
| a $(v tokens_64)-token text, p50 | $(v embed_64_p50_ms) ms |
| a $(v tokens_200)-token text, p50 | $(v embed_200_p50_ms) ms |
| load and first vector | $(v load_and_first_embed_ms) ms (target ≤ 300 ms) |
| sgemm rate of this machine (matrixmultiply, one thread; 20×384·384×1536 / 512³) | $(v sgemm_20x384x1536_gflops) / $(v sgemm_512x512x512_gflops) GFLOP/s |
| the model's work for 20 tokens | $(v model_gflop_20_tokens) GFLOP: at the best sgemm rate, a floor of $(v floor_20_tokens_ms) ms |
| rate reached for 20 tokens | $(v achieved_gflops_20_tokens) GFLOP/s |
| resident memory after the first vector | +$(v rss_file_growth_kib) KiB shared file-backed, +$(v rss_anon_growth_kib) KiB private |

Through the public functions, one client, $txns transactions each (capture of a 20-token text
without a vector; recall by a 16-token \`query_text\` over the captured rows):

| | p50 | p95 | transactions/s |
|---|---|---|---|
| capture, \`memory_fabric/hash-384-v1\` | $(cut -d' ' -f1 <<<"$ch") ms | $(cut -d' ' -f2 <<<"$ch") ms | $(cut -d' ' -f3 <<<"$ch") |
| capture, \`sentence-transformers/all-MiniLM-L6-v2\` | $(cut -d' ' -f1 <<<"$cs") ms | $(cut -d' ' -f2 <<<"$cs") ms | $(cut -d' ' -f3 <<<"$cs") |
| recall by text, \`memory_fabric/hash-384-v1\` | $(cut -d' ' -f1 <<<"$rh") ms | $(cut -d' ' -f2 <<<"$rh") ms | $(cut -d' ' -f3 <<<"$rh") |
| recall by text, \`sentence-transformers/all-MiniLM-L6-v2\` | $(cut -d' ' -f1 <<<"$rs") ms | $(cut -d' ' -f2 <<<"$rs") ms | $(cut -d' ' -f3 <<<"$rs") |
MD
