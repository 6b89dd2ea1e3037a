#!/usr/bin/env bash
# The bulk path for migrations, memory_fabric.promote_pending(), in memories per second:
#   bash bench/bulk.sh                              # 2,000 candidates per embedder, batches of 200
#   bash bench/bulk.sh --rows 5000 --batch 500 --debug-build
# For each way a vector is made (the hashing built-in model, the semantic built-in model, and a
# caller's own 384-dimension vectors), a fresh tenant gets N distinct facts captured by an ordinary
# agent role in one statement, then CALL promote_pending(tenant, batch) reviews and promotes them
# as that role, committing per batch. Baseline in the same run: the same N candidates reviewed and
# promoted one call at a time from a client (review_candidate() then promote(), one statement each,
# in one psql session), on a tenant captured the same way. Each measurement checks its result
# (every candidate reviewed once; what review let through promoted) before it is reported.
# Writes bench/results/bulk-<date>/results.tsv and bench/BULK.md.
set -euo pipefail
# the tests' installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
rows=2000 batch=200 release=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) rows=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --debug-build) release=0; shift ;;
    *) echo "usage: $0 [--rows N] [--batch B] [--debug-build]" >&2; exit 2 ;;
  esac
done
cd "$MF_ROOT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=$MF_ROOT/bench/results/bulk-$stamp
mkdir -p "$out"
mf_log "building (release=$release)"
flags=(); [ $release = 1 ] && flags=(--release)
bash scripts/install.sh "${flags[@]}" > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
bash scripts/cluster.sh start
db=memory_fabric_bench_bulk
now_ms() { date +%s%3N; }
q() { mf_psql -X -q -At -d "$db" "$@"; }
# as the agent, pinned to a tenant for the session
qa() { local t=$1; shift; mf_psql -X -q -At -d "$db" -c "SET ROLE bench_bulk_agent" -c "SET memory_fabric.tenant_id = '$t'" "$@"; }
# runs a command, prints its wall time in milliseconds
timed() { local t0 t1; t0=$(now_ms); "$@" > "$out/last.log" 2>&1 || { cat "$out/last.log"; exit 1; }; t1=$(now_ms); echo $((t1 - t0)); }

mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
q -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE"
q <<'SQL'
SET client_min_messages = warning;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bench_bulk_agent') THEN
        CREATE ROLE bench_bulk_agent IN ROLE memory_fabric_agent;
    END IF;
END $$;
-- a caller's own model: 384 deterministic dimensions of the text
CREATE FUNCTION public.bench_vec(t text) RETURNS real[] LANGUAGE sql IMMUTABLE SET search_path = pg_catalog AS $$
    SELECT array_agg((abs(hashtext(t || i::text)) % 997 + 1)::real / 997 ORDER BY i) FROM generate_series(1, 384) i
$$;
GRANT EXECUTE ON FUNCTION public.bench_vec(text) TO bench_bulk_agent;
SQL

# N distinct facts for a tenant, captured by the agent in one statement; model: hash, semantic or caller
capture() {
  local tenant=$1 mode=$2 model vec=""
  # the built-in model is a superuser's setting: for the database, read by each new session
  case $mode in
    hash) model="memory_fabric/hash-384-v1" ;;
    semantic) model="sentence-transformers/all-MiniLM-L6-v2" ;;
    caller) model="auto"; vec=", embedding => public.bench_vec(f.body)::vector, embedding_model => 'bench/caller-384'" ;;
  esac
  q -c "ALTER DATABASE $db SET memory_fabric.builtin_model = '$model'"
  q -c "SELECT count(*) FROM memory_fabric.grant_tenant('bench_bulk_agent', '$tenant')" > /dev/null
  [ "$mode" = caller ] && q -c "SELECT count(*) FROM memory_fabric.register_embedding_model('$tenant', 'bench/caller-384', 384)" > /dev/null
  qa "$tenant" -c "
    SELECT count(*) FROM (SELECT i, format('Shipment %s of customer %s left depot %s on day %s with %s crates.',
                                           md5(i::text), i % 211, i % 13, i % 28 + 1, i % 40 + 1) AS body
                          FROM generate_series(1, $rows) i) f,
         LATERAL memory_fabric.capture_memory('$tenant', f.body, 'agent', 'INTERNAL' $vec) c"
}
# the model the candidates' vectors are of
models() { q -c "SELECT string_agg(DISTINCT embedding_model, ',') FROM memory_fabric.candidates WHERE tenant_id = '$1'"; }
# every candidate reviewed once, and what review let through without a human promoted
check() {
  local tenant=$1
  q -c "SELECT format('%s %s %s %s',
      (SELECT count(*) FROM memory_fabric.candidates c WHERE c.tenant_id = '$tenant'
         AND (SELECT count(*) FROM memory_fabric.reviews r WHERE r.candidate_id = c.id) <> 1),
      (SELECT count(*) FROM memory_fabric.reviews r WHERE r.tenant_id = '$tenant' AND r.status = 'pending_promotion'
         AND r.reviewer = 'auto' AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = r.candidate_id)),
      (SELECT count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = '$tenant'),
      (SELECT count(*) FROM memory_fabric.candidates WHERE tenant_id = '$tenant'))"
}
# the baseline: one review_candidate() and, when it lets it through, one promote() per candidate, from a client
one_by_one() {
  local tenant=$1
  q -c "SELECT c.id FROM memory_fabric.candidates c WHERE c.tenant_id = '$tenant' ORDER BY c.captured_at, c.id" > "$out/ids.txt"
  { echo "SET ROLE bench_bulk_agent;"; echo "SET memory_fabric.tenant_id = '$tenant';"
    while read -r id; do
      echo "SELECT CASE WHEN r.status = 'pending_promotion' AND r.reviewer = 'auto' OR r.status = 'contradicts'
                 AND r.contradiction_resolution IN ('supersede', 'coexist') THEN (memory_fabric.promote('$id')).id END
            FROM memory_fabric.review_candidate('$id') r;"
    done < "$out/ids.txt"; } > "$out/one_by_one.sql"
  mf_psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -f "$out/one_by_one.sql"
}

printf 'mode\trows\tcapture_ms\tbulk_ms\tbulk_promoted\tbaseline_ms\tbaseline_promoted\n' > "$out/results.tsv"
for mode in hash semantic caller; do
  mf_log "$mode: capturing $rows candidates twice"
  cap_ms=$(timed capture "b_$mode" "$mode")
  timed capture "o_$mode" "$mode" > /dev/null
  want=$([ "$mode" = caller ] && echo bench/caller-384 || { [ "$mode" = hash ] && echo memory_fabric/hash-384-v1 || echo sentence-transformers/all-MiniLM-L6-v2; })
  [ "$(models "b_$mode")" = "$want" ] && [ "$(models "o_$mode")" = "$want" ] || { echo "$mode: vectors of $(models "b_$mode"), not $want"; exit 1; }
  q -c "VACUUM ANALYZE" -c "CHECKPOINT"
  mf_log "$mode: promote_pending"
  bulk_ms=$(timed qa "b_$mode" -c "CALL memory_fabric.promote_pending('b_$mode', batch_size => $batch)")
  read -r bad left promoted total <<< "$(check "b_$mode")"
  [ "$bad" = 0 ] && [ "$left" = 0 ] && [ "$total" = "$rows" ] || { echo "promote_pending on b_$mode: $bad not reviewed once, $left promotable left"; exit 1; }
  q -c "CHECKPOINT"
  mf_log "$mode: one call at a time"
  base_ms=$(timed one_by_one "o_$mode")
  read -r bad2 left2 promoted2 total2 <<< "$(check "o_$mode")"
  [ "$bad2" = 0 ] && [ "$left2" = 0 ] || { echo "one by one on o_$mode: $bad2 not reviewed once, $left2 promotable left"; exit 1; }
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$rows" "$cap_ms" "$bulk_ms" "$promoted" "$base_ms" "$promoted2" >> "$out/results.tsv"
done

commit=$(git rev-parse --short HEAD); [ -z "$(git status --porcelain -- src sql core)" ] || commit="$commit with uncommitted changes"
{
  echo "# The bulk path: promote_pending()"
  echo
  echo "Run: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, release=$release, $(nproc) cores; command: \`bash bench/bulk.sh --rows $rows --batch $batch\`."
  echo "Each row: $rows distinct facts captured by an ordinary agent role in one statement into a fresh tenant,"
  echo "then \`CALL memory_fabric.promote_pending(tenant, batch_size => $batch)\` as that role (review and promotion, a commit per batch),"
  echo "against the same work one call at a time from a client (\`review_candidate()\`, then \`promote()\` when review lets it through) on a second tenant captured the same way."
  echo "Rates are candidates per second (every candidate is reviewed; \"promoted\" says how many review let through)."
  echo
  echo "| vectors | capture, candidates/s | promote_pending, candidates/s | promoted | one call at a time, candidates/s | promoted | ratio |"
  echo "|---|---|---|---|---|---|---|"
  tail -n +2 "$out/results.tsv" | while IFS=$'\t' read -r mode n cap bulk bp base bbp; do
    awk -v m="$mode" -v n="$n" -v c="$cap" -v b="$bulk" -v bp="$bp" -v o="$base" -v op="$bbp" 'BEGIN {
      name = (m == "hash") ? "hashing built-in (memory_fabric/hash-384-v1)" : (m == "semantic") ? "semantic built-in (all-MiniLM-L6-v2)" : "caller vectors (384 dimensions)"
      printf "| %s | %.0f | %.0f | %d | %.0f | %d | %.2f |\n", name, n / (c / 1000), n / (b / 1000), bp, n / (o / 1000), op, o / b }'
  done
} > bench/BULK.md
cat bench/BULK.md
mf_psql -d postgres -q -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
