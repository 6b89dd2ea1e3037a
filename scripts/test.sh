#!/usr/bin/env bash
# Sets up everything and runs every test layer:
#   1. unit     pure-Rust tests of the core            (cargo test -p memory_fabric_core)
#   2. pg_test  #[pg_test] inside a backend            (cargo pgrx test, its own cluster)
#   3. regress  pg_regress against the local cluster   (tests/pg_regress)
#   4. isolation  pg_isolation_regress specs for races   (tests/isolation)
#   5. shell    client-level checks, e.g. notifications  (tests/shell)
# Exits non-zero if any layer fails; ends with a "N passed, N failed" line.
# Name layers to run only those: bash scripts/test.sh regress
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bash "$MF_ROOT/scripts/setup.sh"
cd "$MF_ROOT"
mkdir -p "$MF_BUILD/logs"
logs=$MF_BUILD/logs
total_pass=0 total_fail=0 failed_layers=()
want() { [ ${#selected[@]} = 0 ] || [[ " ${selected[*]} " == *" $1 "* ]]; }
selected=("$@")

count_cargo() { # sums "test result: ... N passed; M failed" lines
  awk '/test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed/) p += $(i-1); if ($(i) ~ /^failed/) f += $(i-1) } }
       END { printf "%d %d\n", p, f }' "$1"
}

layer() { # name, log, command…
  local name=$1 log=$2; shift 2
  mf_log "test layer: $name"
  local rc=0
  "$@" 2>&1 | tee "$log" || rc=$?
  return $rc
}

# 1. unit
if want unit; then
rc=0; layer unit "$logs/unit.log" cargo test -p memory_fabric_core || rc=$?
read -r p f < <(count_cargo "$logs/unit.log")
total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
[ $rc = 0 ] || failed_layers+=(unit)
fi

# 2. pg_test (installs a pg_test build of the extension; the normal build is installed after)
if want pg_test; then
pgtest_data=$MF_STATE/pgtest
mkdir -p "$pgtest_data"
if mf_is_root; then chown postgres:postgres "$pgtest_data"; fi
runas=(); if mf_is_root; then runas=(--runas postgres); fi
rc=0; layer pg_test "$logs/pg_test.log" cargo pgrx test "pg$MF_PG_MAJOR" "${runas[@]}" --pgdata "$pgtest_data/data" || rc=$?
read -r p f < <(count_cargo "$logs/pg_test.log")
total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
[ $rc = 0 ] || { failed_layers+=(pg_test); [ "$f" -gt 0 ] || total_fail=$((total_fail + 1)); }
fi

# 3. regress
if want regress; then
mf_log "installing the extension"
cargo pgrx install --pg-config "$MF_PG_CONFIG" >"$logs/install.log" 2>&1 || { cat "$logs/install.log"; exit 1; }
bash "$MF_ROOT/scripts/cluster.sh" start
export MF_PG_BINDIR MF_REGRESS_TMP=$MF_BUILD/regress
rm -rf "$MF_REGRESS_TMP"; mkdir -p "$MF_REGRESS_TMP"; chmod 777 "$MF_REGRESS_TMP"
schedule=(setup capture capture_errors append_only review promote recall dump_restore)
rc=0; layer regress "$logs/regress.log" "$MF_PGXS_TEST/regress/pg_regress" \
  --inputdir="$MF_ROOT/tests/pg_regress" --outputdir="$MF_REGRESS_TMP" \
  --host="$MF_PGHOST" --port="$MF_PGPORT" --user="$MF_PGUSER" \
  --dbname=memory_fabric_regress "${schedule[@]}" || rc=$?
f=$(grep -cE ' \.\.\. FAILED' "$logs/regress.log" || true)
p=$(( ${#schedule[@]} - f ))
total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
if [ $rc != 0 ]; then
  failed_layers+=(regress)
  [ "$f" -gt 0 ] || total_fail=$((total_fail + 1))
  [ -f "$MF_REGRESS_TMP/regression.diffs" ] && head -200 "$MF_REGRESS_TMP/regression.diffs"
fi
fi

# 4. isolation: races between sessions (pg_isolation_regress against the local cluster)
if want isolation; then
if ! want regress; then
  cargo pgrx install --pg-config "$MF_PG_CONFIG" >"$logs/install.log" 2>&1 || { cat "$logs/install.log"; exit 1; }
  bash "$MF_ROOT/scripts/cluster.sh" start
fi
iso_out=$MF_BUILD/isolation
rm -rf "$iso_out"; mkdir -p "$iso_out"
specs=(); for f in "$MF_ROOT"/tests/isolation/specs/*.spec; do specs+=("$(basename "$f" .spec)"); done
rc=0; layer isolation "$logs/isolation.log" "$MF_PGXS_TEST/isolation/pg_isolation_regress" \
  --inputdir="$MF_ROOT/tests/isolation" --outputdir="$iso_out" \
  --host="$MF_PGHOST" --port="$MF_PGPORT" --user="$MF_PGUSER" --dbname=memory_fabric_isolation \
  --load-extension=vector --load-extension=memory_fabric "${specs[@]}" || rc=$?
f=$(grep -cE ' \.\.\. FAILED' "$logs/isolation.log" || true)
p=$(( ${#specs[@]} - f ))
total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
if [ $rc != 0 ]; then
  failed_layers+=(isolation)
  [ "$f" -gt 0 ] || total_fail=$((total_fail + 1))
  [ -f "$iso_out/regression.diffs" ] && head -200 "$iso_out/regression.diffs"
fi
fi

# 5. shell: client-level checks that pg_regress cannot express (notifications)
if want shell; then
if ! want regress && ! want isolation; then
  cargo pgrx install --pg-config "$MF_PG_CONFIG" >"$logs/install.log" 2>&1 || { cat "$logs/install.log"; exit 1; }
  bash "$MF_ROOT/scripts/cluster.sh" start
fi
for t in "$MF_ROOT"/tests/shell/*.sh; do
  rc=0; layer "shell $(basename "$t")" "$logs/shell-$(basename "$t" .sh).log" bash "$t" || rc=$?
  p=$(grep -c '^ok - ' "$logs/shell-$(basename "$t" .sh).log" || true)
  f=$(grep -c '^not ok - ' "$logs/shell-$(basename "$t" .sh).log" || true)
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
  if [ $rc != 0 ]; then failed_layers+=("shell:$(basename "$t")"); [ "$f" -gt 0 ] || total_fail=$((total_fail + 1)); fi
done
fi

echo
if [ ${#failed_layers[@]} -gt 0 ]; then
  echo "failed layers: ${failed_layers[*]}"
fi
echo "$total_pass passed, $total_fail failed"
[ ${#failed_layers[@]} = 0 ]
