#!/usr/bin/env bash
# The Python package's tests: installs it with pip from this folder (the build uses setuptools and
# wheel as installed, installing wheel once if missing; its one dependency, psycopg, is the test
# suite's), then
# runs tests/test_client.py against the local cluster, as ordinary roles; prints TAP lines.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib.sh"
here=$MF_ROOT/clients/python
target=$MF_BUILD/python-client
rm -rf "$target"
python3 -c "import psycopg" 2>/dev/null || python3 -m pip install -q "psycopg[binary]"
python3 -c "import wheel" 2>/dev/null || python3 -m pip install -q wheel
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target "$target" "$here" \
  > "$MF_BUILD/python-client-install.log" 2>&1 || { cat "$MF_BUILD/python-client-install.log"; echo "not ok - pip install ./clients/python"; exit 1; }
echo "ok - pip install ./clients/python"
rm -rf "$here/build" "$here"/*.egg-info
out=$(cd "$here/tests" && MF_TEST_CONNINFO="host=$MF_PGHOST port=$MF_PGPORT user=$MF_PGUSER" PYTHONPATH="$target" \
      python3 -m unittest -v test_client 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out" | awk '/ \.\.\. ok$/ {print "ok - " $1; next} / \.\.\. (FAIL|ERROR)$/ {print "not ok - " $1; next} {print "# " $0}'
# the package imported is the installed one, not the source folder
PYTHONPATH="$target" python3 -c "import memory_fabric, sys; sys.exit(0 if memory_fabric.__file__.startswith('$target') else 1)" \
  && echo "ok - the installed package is the one tested" || { echo "not ok - the installed package is the one tested"; rc=1; }
exit $rc
