#!/usr/bin/env bash
# The maintenance procedures against baselines measured in the same run, on the same data:
#   bash bench/maintenance.sh                          # 20k and 50k memories, batches of 500
#   bash bench/maintenance.sh --rows 20000 --batch 1000 --debug-build
# For each size, tenants with the same N memories (texts distinct, vectors of a model
# 'bench/old-384' written on the owner's bulk path), then:
#   re-embedding  CALL reembed_memories(tenant, batch) as an ordinary admin role, with the built-in
#                 embedder, committing per batch   vs   one plain UPDATE computing the same vectors
#                 with the same embedder, as the owner, in one transaction (no batches, no events,
#                 no progress, not resumable)
#   purging       CALL purge_expired_memories(tenant, batch)   and   purge_expired(tenant) (one
#                 transaction)   vs   two plain UPDATEs writing the same tombstones, as the owner
# Re-embedding is measured twice, in both orders (procedure then baseline, baseline then
# procedure), on fresh tenants, and reported as the mean of the two: what one leaves in the caches
# and indexes favours or burdens the next; a re-embedding that is not measured goes first. Before every measurement the tables are vacuumed and a
# checkpoint is taken; autovacuum is off for the extension's tables while the script runs (an
# HNSW vacuum started by one measurement would run during the next).
# Each measurement checks its result (every row re-embedded or tombstoned) before it is reported.
# Writes bench/results/maintenance-<date>/results.tsv and bench/MAINTENANCE.md.
set -euo pipefail
# the tests' installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
rows=20000,50000 batch=500 release=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) rows=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --debug-build) release=0; shift ;;
    *) echo "usage: $0 [--rows N,N] [--batch B] [--debug-build]" >&2; exit 2 ;;
  esac
done
cd "$MF_ROOT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=$MF_ROOT/bench/results/maintenance-$stamp
mkdir -p "$out"
mf_log "building (release=$release)"
flags=(); [ $release = 1 ] && flags=(--release)
bash scripts/install.sh "${flags[@]}" > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
bash scripts/cluster.sh start
db=memory_fabric_bench_maint
q() { mf_psql -X -q -At -d "$db" "$@"; }
now_ms() { date +%s%3N; }
# runs a command, prints its wall time in milliseconds
timed() { local t0 t1; t0=$(now_ms); "$@" > "$out/last.log" 2>&1 || { cat "$out/last.log"; exit 1; }; t1=$(now_ms); echo $((t1 - t0)); }

mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
q -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE"
q <<'SQL'
SET client_min_messages = warning;
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bench_maint_admin') THEN
        CREATE ROLE bench_maint_admin LOGIN IN ROLE memory_fabric_admin;
    END IF;
END $$;
-- N memories of a tenant on the owner's bulk path (what promote would have written), expired
-- two days ago when asked
CREATE FUNCTION public.bench_load(tenant text, n integer, expired boolean) RETURNS void LANGUAGE sql AS $f$
    INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
                                          content_hash, policy_version)
    SELECT format('mc_%s_%s', tenant, i), tenant, 'agent',
           format('Memory %s: order %s shipped to depot %s on day %s.', i, md5(i::text), i % 97, i % 31), 'INTERNAL',
           (SELECT array_agg(random()::real) FROM generate_series(1, 384 + i * 0) g)::vector, 'bench/old-384',
           md5(i::text) || md5(tenant), 1
    FROM generate_series(1, n) i;
    INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
    SELECT format('rv_%s_%s', tenant, i), tenant, format('mc_%s_%s', tenant, i), 'pending_promotion', 'working', 0.5, 'auto', 1
    FROM generate_series(1, n) i;
    INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
                                               priority, embedding, embedding_model, content_hash, promoted_by, promoted_at, expires_at)
    SELECT format('pm_%s_%s', tenant, c.id), c.id, format('rv_%s', substr(c.id, 4)), tenant, c.text, c.classification, c.source,
           'working', 0.5, c.embedding, c.embedding_model, c.content_hash, 'auto',
           now() - interval '3 days', CASE WHEN expired THEN now() - interval '2 days' END
    FROM memory_fabric.candidates c WHERE c.tenant_id = tenant;
$f$;
SQL

q -c "ALTER TABLE memory_fabric.promoted_memory SET (autovacuum_enabled = false)" \
  -c "ALTER TABLE memory_fabric.candidates SET (autovacuum_enabled = false)" > /dev/null
printf 'rows\tprocedure first: procedure\tbaseline\tbaseline first: baseline\tprocedure\n' > "$out/reembed-runs.tsv"
printf 'rows\toperation\tms\trows_per_s\n' > "$out/results.tsv"
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(( $1 * 1000 / ($3 > 0 ? $3 : 1) ))" | tee -a "$out/results.tsv"; }
admin() { # runs SQL as the tenant's admin, pinned for the session
  mf_psql -X -q -d "$db" -U bench_maint_admin -c "SET client_min_messages = warning" -c "SET memory_fabric.tenant_id = '$1'" -c "$2"
}
settle() { q -c "VACUUM memory_fabric.promoted_memory" -c "VACUUM memory_fabric.candidates" -c "CHECKPOINT" > /dev/null; }
reembed_proc() { admin "$1" "CALL memory_fabric.reembed_memories('$1', batch_size => $batch)"; }
reembed_base() {
  q -c "UPDATE memory_fabric.promoted_memory SET (embedding, embedding_model) =
        (SELECT coalesce(e.semantic, e.builtin)::vector, coalesce(e.semantic_model, e.builtin_model)
         FROM memory_fabric._embed_query(tenant_id, text) e) WHERE tenant_id = '$1'"
}
for n in ${rows//,/ }; do
  mf_log "$n memories per tenant: loading"
  for t in re_warm_$n re_p1_$n re_b1_$n re_b2_$n re_p2_$n; do q -c "SELECT public.bench_load('$t', $n, false)" > /dev/null; done
  for t in pu_proc_$n pu_func_$n pu_base_$n; do q -c "SELECT public.bench_load('$t', $n, true)" > /dev/null; done
  q -c "SET client_min_messages = warning" -c "SELECT memory_fabric.set_policy(t, '{\"retention_seconds\": {\"default\": 0}}')
        FROM unnest(ARRAY['pu_proc_$n', 'pu_func_$n', 'pu_base_$n']) t" > /dev/null
  q -c "SELECT count(*) FROM unnest(ARRAY['re_p1_$n', 're_p2_$n', 'pu_proc_$n', 'pu_func_$n']) t,
        memory_fabric.grant_tenant('bench_maint_admin', t)" > /dev/null
  q -c "ANALYZE" > /dev/null

  # not measured: the first re-embedding into a fresh table pays for warming its indexes and caches
  settle; reembed_base "re_warm_$n" > /dev/null
  mf_log "$n: re-embedding, procedure first"
  settle; p1=$(timed reembed_proc "re_p1_$n"); settle; b1=$(timed reembed_base "re_b1_$n")
  mf_log "$n: re-embedding, baseline first"
  settle; b2=$(timed reembed_base "re_b2_$n"); settle; p2=$(timed reembed_proc "re_p2_$n")
  printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$p1" "$b1" "$b2" "$p2" >> "$out/reembed-runs.tsv"
  row "$n" "reembed_memories (batches of $batch)" $(( (p1 + p2) / 2 ))
  row "$n" "baseline: one UPDATE with the same embedder" $(( (b1 + b2) / 2 ))
  # every row carries the model in force for the tenant (the semantic one when installed, as
  # reembed_memories uses); 100 rows of each tenant, drawn at random, carry
  # exactly the vector that model gives their text (embedding all 4N again would take as long as
  # the measurements)
  check=$(q -c "SELECT count(*) FILTER (WHERE embedding_model = (SELECT coalesce(e.semantic_model, e.builtin_model) FROM memory_fabric._embed_query(tenant_id, '') e))
                FROM memory_fabric.promoted_memory WHERE tenant_id IN ('re_p1_$n', 're_b1_$n', 're_b2_$n', 're_p2_$n')")
  [ "$check" = $((4 * n)) ] || { echo "re-embedding check failed: $check of $((4 * n)) rows carry the model in force"; exit 1; }
  check=$(q -c "SELECT count(*) FILTER (WHERE s.embedding = (SELECT coalesce(e.semantic, e.builtin) FROM memory_fabric._embed_query(s.tenant_id, s.text) e)::vector)
                FROM unnest(ARRAY['re_p1_$n', 're_b1_$n', 're_b2_$n', 're_p2_$n']) t,
                LATERAL (SELECT * FROM memory_fabric.promoted_memory m WHERE m.tenant_id = t ORDER BY random() LIMIT 100) s")
  [ "$check" = 400 ] || { echo "re-embedding check failed: $check of 400 sampled rows carry their text's vector"; exit 1; }

  mf_log "$n: purging"
  settle; ms=$(timed admin "pu_proc_$n" "CALL memory_fabric.purge_expired_memories('pu_proc_$n', batch_size => $batch)")
  row "$n" "purge_expired_memories (batches of $batch)" "$ms"
  settle; ms=$(timed admin "pu_func_$n" "SELECT memory_fabric.purge_expired('pu_func_$n', batch_size => $batch)")
  row "$n" "purge_expired (one transaction, batches of $batch)" "$ms"
  settle; ms=$(timed q -c "BEGIN" -c "WITH m AS (UPDATE memory_fabric.promoted_memory SET erased_at = clock_timestamp(), text = '[erased]',
                   value = NULL, embedding = NULL, evidence_refs = '[]', content_hash = memory_fabric._erased_digest(content_hash)
                   WHERE tenant_id = 'pu_base_$n' AND erased_at IS NULL RETURNING candidate_id)
                   UPDATE memory_fabric.candidates c SET erased_at = clock_timestamp(), text = '[erased]', value = NULL,
                   embedding = NULL, metadata = '{}', evidence_refs = '[]', content_hash = memory_fabric._erased_digest(c.content_hash)
                   FROM m WHERE c.id = m.candidate_id" -c "COMMIT")
  row "$n" "baseline: two UPDATEs writing the same tombstones" "$ms"
  check=$(q -c "SELECT count(*) FROM memory_fabric.promoted_memory m JOIN memory_fabric.candidates c ON c.id = m.candidate_id
                WHERE m.tenant_id LIKE 'pu\_%\_$n' AND m.text = '[erased]' AND c.text = '[erased]' AND m.erased_at IS NOT NULL")
  [ "$check" = $((3 * n)) ] || { echo "purge check failed: $check of $((3 * n))"; exit 1; }
done

python3 - "$out/results.tsv" "$MF_ROOT/bench/MAINTENANCE.md" "$stamp" "$batch" "$release" <<'PY'
import csv, subprocess, sys
tsv, md, stamp, batch, release = sys.argv[1:]
rows = list(csv.DictReader(open(tsv), delimiter="\t"))
sizes = sorted({int(r["rows"]) for r in rows})
def ms(n, prefix):
    return next(int(r["ms"]) for r in rows if int(r["rows"]) == n and r["operation"].startswith(prefix))
pg = subprocess.run(["/usr/lib/postgresql/15/bin/postgres", "--version"], capture_output=True, text=True).stdout.strip()
lines = [
    "# Maintenance procedures: measured",
    "",
    f"Run: {stamp}, `bash bench/maintenance.sh` ({'release' if release == '1' else 'debug'} build), {pg}, 2 cores. "
    f"Batches of {batch}. Results: `bench/results/maintenance-{stamp}/results.tsv`.",
    "Every tenant holds the same N memories; the procedures run as an ordinary admin role with row-level security on, "
    "the baselines as the owner. Wall time of the whole call, including psql's connection. Re-embedding: the mean of "
    "two runs in opposite orders. Tables vacuumed and a checkpoint taken before each measurement; autovacuum off.",
    "",
    "| memories | operation | ms | memories/s | vs baseline |",
    "|---|---|---|---|---|",
]
for n in sizes:
    for r in [r for r in rows if int(r["rows"]) == n]:
        op = r["operation"]
        base = ms(n, "baseline: one UPDATE") if "reembed" in op or "one UPDATE" in op else ms(n, "baseline: two UPDATEs")
        ratio = f"{int(r['ms']) / base:.2f}×" if not op.startswith("baseline") else "1.00×"
        lines.append(f"| {n:,} | {op} | {int(r['ms']):,} | {int(r['rows_per_s']):,} | {ratio} |")
runs = list(csv.reader(open(tsv.replace("results.tsv", "reembed-runs.tsv")), delimiter="\t"))[1:]
lines += ["", "A ratio is the operation's time over its baseline's in the same run (lower is faster). "
          "Re-embedding, each order in ms (procedure, baseline): "
          + "; ".join(f"{int(r[0]):,}: procedure first {int(r[1]):,} / {int(r[2]):,}, baseline first {int(r[4]):,} / {int(r[3]):,}"
                      for r in runs) + "."]
open(md, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
mf_psql -d postgres -q -c "DROP DATABASE $db WITH (FORCE)"
