#!/usr/bin/env bash
# The Python package's tests: in the pinned virtual environment (tests/env.sh), installs the
# package with pip from this folder (no dependencies fetched: they are the environment's), then
# runs every tests/test_*.py against the local cluster, as ordinary roles; prints TAP lines.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$here/tests/env.sh"
"$MF_PY" -m pip uninstall -q -y memory-fabric >/dev/null 2>&1 || true
"$MF_PY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation --no-index "$here" \
  > "$MF_BUILD/python-client-install.log" 2>&1 || { cat "$MF_BUILD/python-client-install.log"; echo "not ok - pip install ./clients/python"; exit 1; }
echo "ok - pip install ./clients/python"
rm -rf "$here/build" "$here"/*.egg-info
out=$(cd "$here/tests" && MF_TEST_CONNINFO="host=$MF_PGHOST port=$MF_PGPORT user=$MF_PGUSER" \
      "$MF_PY" -m unittest discover -v -s . -p 'test_*.py' 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | awk '/ \.\.\. ok$/ {print "ok - " $1; next} / \.\.\. (FAIL|ERROR)$/ {print "not ok - " $1; next} / \.\.\. skipped/ {print "not ok - " $1 " (skipped)"; next} {print "# " $0}'
# the package imported is the installed one, not the source folder
(cd / && "$MF_PY" -c "import memory_fabric, sys; sys.exit(0 if memory_fabric.__file__.startswith('$MF_PYENV') else 1)") \
  && echo "ok - the installed package is the one tested" || { echo "not ok - the installed package is the one tested"; rc=1; }
exit $rc
