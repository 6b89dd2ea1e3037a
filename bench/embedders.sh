#!/usr/bin/env bash
# The built-in embedders, measured: the forward pass alone beside the sgemm rate of this machine
# (core/examples/embed_bench.rs, release build, one thread), then capture without a vector and
# recall by query_text through the public functions, as an ordinary role with row-level security
# on, with each built-in model. One client, on the running cluster, after installing a release
# build of the extension (as bench/run.sh does; a test run puts the development build back).
#   bash bench/embedders.sh [--transactions N]
# Prints a Markdown section for BENCHMARKS.md.
set -euo pipefail
# the tests' installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
txns=300
[ "${1:-}" = --transactions ] && txns=$2
cd "$MF_ROOT"
mf_log "installing a release build"
bash scripts/install.sh --release > "$MF_BUILD/bench-embedders-install.log" 2>&1 \
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
run() { # model, script[, label] → "p50 p95 tps" (latencies in ms, from bench/percentiles.py)
  mf_psql -d "$db" -q -c "ALTER ROLE bench_embed_agent SET memory_fabric.builtin_model = '$1'" >/dev/null
  local log=$out/$2-${1//\//_}${3:+-$3}; mkdir -p "$log"; chmod 777 "$log"
  (cd "$log" && "$MF_PG_BINDIR/pgbench" -n -h "$MF_PGHOST" -p "$MF_PGPORT" -U bench_embed_agent -c 1 -t "$txns" \
      -l --log-prefix=tx -f "$out/$2.sql" "$db" > summary.txt 2>&1)
  python3 "$MF_ROOT/bench/percentiles.py" 0 "$2" 1 "$log" | awk -F'\t' '{printf "%.2f %.2f %.0f\n", $5, $6, $4}'
}
ch=$(run memory_fabric/hash-384-v1 capture); cs=$(run sentence-transformers/all-MiniLM-L6-v2 capture)
rh=$(run memory_fabric/hash-384-v1 recall); rs=$(run sentence-transformers/all-MiniLM-L6-v2 recall)

# Review with the learned judge. 200 users of tenant t_judge, each with one promoted memory (its
# own scope), and two candidates each: one on the memory's topic (its one neighbour past the
# same-topic gate, a generic statement denied, which the claims and the rules leave to the judge:
# it reads the pair both ways) and one on another topic (none past it).
# Reviewing a candidate again records a new review, so each transaction reviews one of them.
users=200
mf_psql -d "$db" -q -v users=$users >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT count(*) FROM memory_fabric.grant_tenant('bench_embed_agent', 't_judge');
SET memory_fabric.builtin_model = 'sentence-transformers/all-MiniLM-L6-v2';
SELECT count(memory_fabric.promote(r.candidate_id))
FROM generate_series(1, :users) n,
     memory_fabric.capture_memory('t_judge', 'The courier for site ' || n || ' rings the bell on arrival.', 'agent', 'INTERNAL',
                                  user_id => 'u' || n) c,
     memory_fabric.review_candidate(c.id) r;
CREATE TABLE public.bench_judge_ids (n int, topic text, id text, PRIMARY KEY (n, topic));
INSERT INTO public.bench_judge_ids
SELECT n, t.topic, (memory_fabric.capture_memory('t_judge', format(t.text, n), 'agent', 'INTERNAL', user_id => 'u' || n)).id
FROM generate_series(1, :users) n,
     (VALUES ('same', 'The courier for site %s never rings the bell on arrival.'),
             ('other', 'The warehouse of region %s closes at noon on Saturdays.')) t(topic, text);
GRANT SELECT ON public.bench_judge_ids TO bench_embed_agent;
SQL
for topic in same other; do
  cat > "$out/review_$topic.sql" <<SQL
\set n random(1, $users)
SET memory_fabric.tenant_id = 't_judge';
SELECT memory_fabric.review_candidate(id) IS NOT NULL FROM public.bench_judge_ids WHERE n = :n AND topic = '$topic';
SQL
done
judge_policy() { # on | off: the tenant's policy, a new version
  local v; v=$(mf_psql -d "$db" -At -c "SELECT coalesce(max(version), 1) + 1 FROM memory_fabric.policies WHERE tenant_id = 't_judge'")
  mf_psql -d "$db" -q -c "INSERT INTO memory_fabric.policies (tenant_id, version, body) VALUES ('t_judge', $v, '{\"judge\": {\"enabled\": $1}}')" >/dev/null
}
mf_psql -d "$db" -q -c "ALTER ROLE bench_embed_agent SET memory_fabric.builtin_model = 'sentence-transformers/all-MiniLM-L6-v2'" >/dev/null
judge_policy true
js=$(run sentence-transformers/all-MiniLM-L6-v2 review_same on); jo=$(run sentence-transformers/all-MiniLM-L6-v2 review_other on)
judged=$(mf_psql -d "$db" -At -c "SELECT round(avg(jsonb_array_length(judge_scores)), 2) FROM memory_fabric.reviews r JOIN public.bench_judge_ids b ON b.id = r.candidate_id WHERE b.topic = 'same' AND r.judge_model IS NOT NULL")
judge_policy false
ns=$(run sentence-transformers/all-MiniLM-L6-v2 review_same off); no=$(run sentence-transformers/all-MiniLM-L6-v2 review_other off)
mf_psql -d "$db" -q -c "ALTER ROLE bench_embed_agent RESET ALL" >/dev/null
mf_psql -d postgres -q -c "DROP DATABASE $db"

cat <<MD
## Built-in embedders

Measured $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD) with \`bash bench/embedders.sh\` on this 2-core machine.

The forward pass alone (\`core/examples/embed_bench.rs\`, release build, one thread):

| figure | value |
|---|---|
| a $(v tokens_20)-token text, p50 / p95 | $(v embed_20_p50_ms) / $(v embed_20_p95_ms) ms (target ≤ 8 ms p50) |
| review's judge, one direction of a $(v judge_tokens)-token pair, p50 / p95 (bfloat16: $(v judge_bf16)) | $(v judge_pair_p50_ms) / $(v judge_pair_p95_ms) ms (target ≤ 8 ms p50) |
| the same in f32 throughout (the path without AVX-512 bfloat16) | $(v judge_pair_f32_p50_ms) / $(v judge_pair_f32_p95_ms) ms |
| private memory of the judge merged into the weights, once per process | +$(v judge_merge_anon_growth_kib) KiB |
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

Review with the learned judge, one client, $txns transactions each: $users users with one memory
each; a candidate on its memory's topic (one neighbour past the same-topic gate; the judge read
$judged pairs a review) or on another (none past it), with the tenant's policy turning the judge on
or off:

| review | judge on: p50 | p95 | judge off: p50 | p95 | target (judge on) |
|---|---|---|---|---|---|
| one neighbour past the gate | $(cut -d' ' -f1 <<<"$js") ms | $(cut -d' ' -f2 <<<"$js") ms | $(cut -d' ' -f1 <<<"$ns") ms | $(cut -d' ' -f2 <<<"$ns") ms | ≤ 20 ms p50 |
| none past the gate | $(cut -d' ' -f1 <<<"$jo") ms | $(cut -d' ' -f2 <<<"$jo") ms | $(cut -d' ' -f1 <<<"$no") ms | $(cut -d' ' -f2 <<<"$no") ms | ≤ 3 ms p50 at 1M |
MD
