#!/usr/bin/env bash
# The semantic built-in embedder's files, as a server sees them: the fallback rule when they are
# missing, a clear error when the model is named explicitly without them, and a damaged file
# refused under either setting (never silently replaced by the hashing model). Run as an
# ordinary agent role; only the superuser may point memory_fabric.model_dir elsewhere.
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
db=memory_fabric_model_files
tmp=$(mktemp -d /tmp/mf_model_files.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/empty" "$tmp/damaged" "$tmp/nojudge" "$tmp/badjudge" "$tmp/otherjudge"
installed=$("$MF_PG_CONFIG" --sharedir)/extension/memory_fabric/all-MiniLM-L6-v2
cp "$installed/vocab.txt" "$tmp/damaged/vocab.txt"
head -c 4096 "$installed/model.safetensors" > "$tmp/damaged/model.safetensors"
# the semantic model without review's judge, with a cut one, and with a sound file of another
# judge (the same tensors, one weight changed: not the file this build was tested with)
for d in nojudge badjudge otherjudge; do ln -s "$installed/model.safetensors" "$installed/vocab.txt" "$tmp/$d/"; done
head -c 100000 "$installed/judge.safetensors" > "$tmp/badjudge/judge.safetensors"
python3 - "$installed/judge.safetensors" "$tmp/otherjudge/judge.safetensors" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[-4] ^= 1  # a low bit of the last weight: still a finite float32
open(sys.argv[2], "wb").write(b)
PY
chmod -R a+rX "$tmp"

mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
mf_psql -d "$db" -q <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION memory_fabric CASCADE;
DROP ROLE IF EXISTS mf_model_agent;
CREATE ROLE mf_model_agent LOGIN IN ROLE memory_fabric_agent;
SELECT count(*) FROM memory_fabric.grant_tenant('mf_model_agent', 't_model');
SQL
# capture as the agent, with the given settings (set by the superuser for that role); prints
# the model recorded, or the SQLSTATE and message
as_agent() {
  mf_psql -d "$db" -q -c "ALTER ROLE mf_model_agent SET memory_fabric.model_dir = '$1'" \
    -c "ALTER ROLE mf_model_agent SET memory_fabric.builtin_model = '$2'" >/dev/null
  mf_psql -d "$db" -At -U mf_model_agent -v ON_ERROR_STOP=0 2>&1 <<'SQL' | grep -v '^SET$' || true
\set VERBOSITY sqlstate
SET memory_fabric.tenant_id = 't_model';
SELECT embedding_model FROM memory_fabric.capture_memory('t_model', 'The customer prefers email.', 'agent', 'INTERNAL');
SQL
}
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok - $1"; else echo "not ok - $1: got '$2', want '$3'"; fail=1; fi; }

check "installed weights, auto: the semantic model" "$(as_agent "$installed" auto)" "sentence-transformers/all-MiniLM-L6-v2"
check "no weights, auto: the hashing model" "$(as_agent "$tmp/empty" auto)" "memory_fabric/hash-384-v1"
check "no weights, the semantic model named: 58P01" \
  "$(as_agent "$tmp/empty" sentence-transformers/all-MiniLM-L6-v2)" "ERROR:  58P01"
check "no weights, the hashing model named: the hashing model" \
  "$(as_agent "$tmp/empty" memory_fabric/hash-384-v1)" "memory_fabric/hash-384-v1"
check "damaged weights, auto: 58030, not a quiet fallback" "$(as_agent "$tmp/damaged" auto)" "ERROR:  58030"
check "an unknown model name: 22023" "$(as_agent "$installed" no-such-model)" "ERROR:  22023"

msg=$(mf_psql -d "$db" -q -c "ALTER ROLE mf_model_agent SET memory_fabric.model_dir = '$tmp/empty'" \
        -c "ALTER ROLE mf_model_agent SET memory_fabric.builtin_model = 'sentence-transformers/all-MiniLM-L6-v2'" 2>&1 >/dev/null
      mf_psql -d "$db" -q -U mf_model_agent -v ON_ERROR_STOP=0 \
        -c "SET memory_fabric.tenant_id = 't_model'" \
        -c "SELECT id FROM memory_fabric.capture_memory('t_model', 'x', 'agent', 'INTERNAL')" 2>&1 || true)
if grep -q "are not installed in" <<<"$msg" && grep -q "HINT:  Run scripts/install_model.sh" <<<"$msg"; then
  echo "ok - the error names the folder and how to install"
else
  echo "not ok - the error names the folder and how to install: $msg"; fail=1
fi
# An ordinary role cannot choose the model: refused once the library is loaded, and a value set
# before (a placeholder, which PostgreSQL lets anyone set) is thrown away when it loads.
mf_psql -d "$db" -q -c "ALTER ROLE mf_model_agent SET memory_fabric.model_dir = '$installed'" \
  -c "ALTER ROLE mf_model_agent SET memory_fabric.builtin_model = 'auto'" >/dev/null
out=$(mf_psql -d "$db" -At -U mf_model_agent -v ON_ERROR_STOP=0 2>&1 <<'SQL' || true
SET memory_fabric.tenant_id = 't_model';
SELECT count(*) FROM memory_fabric.recall('t_model', NULL);
SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1';
SQL
)
if grep -q 'permission denied to set parameter "memory_fabric.builtin_model"' <<<"$out"; then
  echo "ok - an ordinary role cannot choose the built-in model"
else
  echo "not ok - an ordinary role cannot choose the built-in model: $out"; fail=1
fi
out=$(mf_psql -d "$db" -At -U mf_model_agent -v ON_ERROR_STOP=0 2>&1 <<'SQL' || true
SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1';
SET memory_fabric.tenant_id = 't_model';
SELECT embedding_model FROM memory_fabric.capture_memory('t_model', 'Set before the library loaded.', 'agent', 'INTERNAL');
SQL
)
if grep -qx "sentence-transformers/all-MiniLM-L6-v2" <<<"$out"; then
  echo "ok - a value an ordinary role set before the library loaded is not used"
else
  echo "not ok - a value an ordinary role set before the library loaded is not used: $out"; fail=1
fi
n=$(mf_psql -d "$db" -At -c "SELECT count(*) FROM memory_fabric.candidates")
check "nothing was written by a failed capture" "$n" "4"

# Review's learned judge: read when installed (its SHA-256 recorded on the review); when its file
# is missing, review decides by its rules and the log says so once per backend; a damaged file,
# or another judge's, fails with 58030 instead of being read or skipped.
mf_psql -d "$db" -q -c "ALTER ROLE mf_model_agent SET memory_fabric.builtin_model = 'auto'" \
  -c "ALTER ROLE mf_model_agent SET memory_fabric.model_dir = '$installed'" >/dev/null
mf_psql -d "$db" -q -U mf_model_agent -c "SET memory_fabric.tenant_id = 't_model'" \
  -c "SELECT memory_fabric.promote(r.candidate_id) FROM memory_fabric.capture_memory('t_model', 'Order ord_31 ships to Lisbon on Monday.', 'agent', 'INTERNAL') c, memory_fabric.review_candidate(c.id) r" >/dev/null
judge_review() { # model_dir → the judge_model of two reviews in one session, and its LOG lines (SQLSTATE only)
  mf_psql -d "$db" -q -c "ALTER ROLE mf_model_agent SET memory_fabric.model_dir = '$1'" >/dev/null
  mf_psql -d "$db" -At -U mf_model_agent -v ON_ERROR_STOP=0 2>&1 <<'SQL' | grep -v '^SET$' || true
\set VERBOSITY sqlstate
SET client_min_messages = log;
SET memory_fabric.tenant_id = 't_model';
SELECT coalesce(r.judge_model, 'none') FROM memory_fabric.capture_memory('t_model', 'Order ord_31 ships to Porto on Monday.', 'agent', 'INTERNAL') c, memory_fabric.review_candidate(c.id) r;
SELECT coalesce(r.judge_model, 'none') FROM memory_fabric.capture_memory('t_model', 'Order ord_31 ships to Faro on Monday.', 'agent', 'INTERNAL') c, memory_fabric.review_candidate(c.id) r;
SQL
}
sha=$(tr -d '[:space:]' < "$MF_ROOT/core/data/judge.sha256")
check "the judge installed: its SHA-256 on each review" "$(judge_review "$installed" | grep -v '^LOG')" "$sha
$sha"
out=$(judge_review "$tmp/nojudge")
check "no judge: the rules decide, the reviews say so" "$(grep -v '^LOG' <<<"$out")" "none
none"
check "no judge: the log says so once per backend" "$(grep -c '^LOG:' <<<"$out")" "1"
check "a damaged judge: 58030" "$(judge_review "$tmp/badjudge" | grep -v '^LOG' | sort -u)" "ERROR:  58030"
check "another judge's file: 58030" "$(judge_review "$tmp/otherjudge" | grep -v '^LOG' | sort -u)" "ERROR:  58030"
scores=$(mf_psql -d "$db" -At -c "SELECT count(*) FILTER (WHERE judge_model IS NULL), count(*) FILTER (WHERE jsonb_array_length(judge_scores) = 1) FROM memory_fabric.reviews WHERE tenant_id = 't_model' AND candidate_id IN (SELECT id FROM memory_fabric.candidates WHERE text LIKE 'Order ord_31 ships to % on Monday.' AND text NOT LIKE '%Lisbon%')")
check "each review records what the judge read, or that it did not" "$scores" "2|2"

mf_psql -d "$db" -q -c "DROP OWNED BY mf_model_agent" -c "DROP ROLE mf_model_agent" >/dev/null 2>&1 || true
mf_psql -d postgres -q -c "DROP DATABASE $db"
exit $fail
