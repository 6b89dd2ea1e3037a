#!/usr/bin/env bash
# Review quality on realistic traffic (SPEC.md §6): the data sets of bench/review_quality/ run
# through capture_memory, review_candidate and promote as an ordinary agent role, as
# memory-fabric-mcp's remember does, in a fresh database of the tests' own cluster.
#   bash bench/review_quality.sh [--locomo PATH [--locomo-sample N]] [--only NAME[,NAME]] [--json OUT]
#                                [--pairs N] [--smoke] [--check] [--jobs N]
# Prints a markdown table of every figure with its target; --check exits 1 when one is missed.
# It uses the extension as installed in the tests' tree and never installs it.
# See bench/review_quality/README.md (what is measured) and DATA.md (data, sources, licences).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# the tests' installation tree and cluster (MF_TESTING=1), and the pinned Python environment
export MF_TESTING=1
. "$here/../clients/python/tests/env.sh"
if [ ! -f "$("$MF_PG_CONFIG" --sharedir)/extension/memory_fabric.control" ]; then
  mf_die "memory_fabric is not installed in the tests' tree $MF_TREE (bash scripts/test.sh installs it)"
fi
bash "$MF_ROOT/scripts/cluster.sh" start >/dev/null
export MF_PGHOST MF_PGPORT MF_PGUSER MF_TREE
MF_RQ_LIBRARY="$("$MF_PG_CONFIG" --pkglibdir)/memory_fabric.so"
export MF_RQ_LIBRARY
exec "$MF_PY" "$here/review_quality/harness.py" "$@"
