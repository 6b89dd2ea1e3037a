#!/usr/bin/env bash
# memory-fabric-console's tests: builds the binary (cargo build -p memory-fabric-console) and runs
# its unit tests, then, in the Python side's pinned virtual environment
# (clients/python/tests/env.sh), drives it in headless Chromium (Debian's chromium and
# chromium-driver) with Selenium as ordinary roles, against a throwaway PostgreSQL instance of its
# own under $MF_STATE (tests/console/test_*.py; the shared cluster is not touched); prints TAP
# lines. Needs the extension installed in PostgreSQL's directories (cargo pgrx install, which
# scripts/test.sh does before its layers).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../../clients/python/tests/env.sh"
cd "$MF_ROOT"
log=$MF_BUILD/console-build.log
if cargo build -p memory-fabric-console > "$log" 2>&1; then
  echo "ok - cargo build -p memory-fabric-console"
else
  cat "$log"; echo "not ok - cargo build -p memory-fabric-console"; exit 1
fi
if grep -q '^warning' "$log"; then
  grep -A8 '^warning' "$log" | sed 's/^/# /'; echo "not ok - the build has no warnings"; rc=1
else
  echo "ok - the build has no warnings"; rc=0
fi
bin=${CARGO_TARGET_DIR:-$MF_ROOT/target}/debug/memory-fabric-console

# unit tests of the binary (word diff, cookies, CSRF compare, arguments, escaping by the templates)
out=$(cargo test -p memory-fabric-console -- --test-threads 2 2>&1) || rc=1
printf '%s\n' "$out" | awk '/^test .* \.\.\. ok$/ {print "ok - unit " $2; next} /^test .* \.\.\. FAILED$/ {print "not ok - unit " $2; next} /^test result: FAILED/ {print "not ok - unit tests"; next} {print "# " $0}'
printf '%s\n' "$out" | grep -q '^test result: ok' || { echo "not ok - unit tests ran"; rc=1; }

# the browser tests: their own PostgreSQL instance, the console, headless Chromium
out=$(cd "$here" && MF_CONSOLE_BIN=$bin MF_PG_BINDIR=$MF_PG_BINDIR MF_STATE=$MF_STATE \
      "$MF_PY" -m unittest discover -v -s . -p 'test_*.py' 2>&1) || rc=1
tap=$(printf '%s\n' "$out" | awk '/ \.\.\. ok$/ {print "ok - " $1; next} / \.\.\. (FAIL|ERROR)$/ {print "not ok - " $1; next} / \.\.\. skipped/ {print "not ok - " $1 " (skipped)"; next} {print "# " $0}')
printf '%s\n' "$tap"
# every test that ran has its line (a warning printed mid-line would hide one)
ran=$(printf '%s\n' "$out" | sed -nE 's/^Ran ([0-9]+) tests? .*/\1/p')
seen=$(printf '%s\n' "$tap" | grep -cE '^(not )?ok - test_' || true)
if [ -z "$ran" ] || [ "$ran" = 0 ] || [ "$ran" != "$seen" ]; then
  echo "not ok - every console test reported (ran ${ran:-none}, reported $seen)"; rc=1
fi
exit $rc
