#!/usr/bin/env bash
# TAP tests (prove, PostgreSQL::Test::Cluster): each test creates its own clusters. initdb refuses
# to run as root, so as root they run as the postgres system user. The clusters start without
# RUST_BACKTRACE, as scripts/cluster.sh does, so that no backtrace reaches an error's DETAIL.
#   bash tests/tap/run.sh              # all of tests/tap/t
#   MF_CRASH_CYCLES=10 MF_CRASH_CLIENTS=8 bash tests/tap/run.sh t/001_crash.pl
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
here=$MF_ROOT/tests/tap
work=$MF_BUILD/tap
rm -rf "$work"; mkdir -p "$work"
perl=$("$MF_PG_CONFIG" --pkglibdir)/pgxs/src/test/perl
tests=("$@"); [ ${#tests[@]} -gt 0 ] || mapfile -t tests < <(cd "$here" && ls t/*.pl)
run=(env -u RUST_BACKTRACE PATH="$MF_PG_BINDIR:$PATH" PERL5LIB="$perl" TESTDIR="$work" MF_ROOT="$MF_ROOT" PG_REGRESS="$MF_PGXS_TEST/regress/pg_regress"
     MF_CRASH_CYCLES="${MF_CRASH_CYCLES:-3}" MF_CRASH_CLIENTS="${MF_CRASH_CLIENTS:-4}"
     prove -v --timer "${tests[@]}")
if [ "$(id -u)" = 0 ]; then
  chown -R postgres "$work"
  # the postgres user must be able to read the tests and run the client script
  (cd "$here" && runuser -u postgres -- "${run[@]}")
else
  (cd "$here" && "${run[@]}")
fi
