#!/usr/bin/env bash
# No Rust backtrace ever reaches a client. pgrx attaches one to the DETAIL of an error that passed
# through Rust whenever the server's environment enables backtraces (RUST_BACKTRACE=1, as
# `cargo pgrx run` and many shells set it). The cluster is restarted with RUST_BACKTRACE=1 for
# this test, then errors are driven through the Rust code: a query cancelled inside it (57014), an
# error raised by a function it calls (P0001), and a too-long argument (54000).
set -euo pipefail
# the tests' own installation tree and cluster, never the system's (scripts/lib.sh)
export MF_TESTING=1
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
db=memory_fabric_backtraces
# restart_with ENV-ARGS: restart the cluster with `env ENV-ARGS` in front of pg_ctl
restart_with() {
  mf_as_pg "$MF_PG_BINDIR/pg_ctl" -D "$MF_PGDATA" -w -t 60 -m fast stop >/dev/null
  # shellcheck disable=SC2086
  mf_as_pg env $1 "$MF_PG_BINDIR/pg_ctl" -D "$MF_PGDATA" -w -t 60 -o "-p $MF_PGPORT -k $MF_PGHOST" \
    -l "$MF_STATE/log/postgres.log" start >/dev/null
}
trap 'restart_with "-u RUST_BACKTRACE -u RUST_LIB_BACKTRACE"' EXIT
restart_with RUST_BACKTRACE=1

mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
mf_psql -d "$db" -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION memory_fabric CASCADE"
out=$(mf_psql -d "$db" -q 2>&1 <<'SQL' || true
\set ON_ERROR_STOP 0
\set VERBOSITY verbose
CREATE FUNCTION public.slow_embed(t text) RETURNS real[] LANGUAGE sql AS $$ SELECT array_fill(0.5::real, ARRAY[8]) FROM pg_sleep(1) $$;
CREATE FUNCTION public.bad_embed(t text) RETURNS real[] LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'embedder is down'; END $$;
SET memory_fabric.embedding_function = 'public.slow_embed';
SET statement_timeout = '200ms';
SELECT memory_fabric.capture_memory('t1', 'The depot opens at 8.', 'agent', 'INTERNAL');
RESET statement_timeout;
SET memory_fabric.embedding_function = 'public.bad_embed';
SELECT memory_fabric.capture_memory('t1', 'The depot opens at 8.', 'agent', 'INTERNAL');
RESET memory_fabric.embedding_function;
SELECT memory_fabric.record_consent('t1', repeat('s', 10 * 1024 * 1024), 'support', 'user_opt_in');
SQL
)
mf_psql -d postgres -q -c "DROP DATABASE $db"
fail=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fail=1; fi; }
check "the server runs with RUST_BACKTRACE=1" \
  "mf_as_pg cat /proc/\$(mf_as_pg head -1 '$MF_PGDATA/postmaster.pid')/environ | tr '\\0' '\\n' | grep -qx RUST_BACKTRACE=1"
check "a cancel inside Rust is 57014" 'grep -q "ERROR:  57014: canceling statement due to statement timeout" <<<"$out"'
check "an error from a function Rust called keeps its SQLSTATE" 'grep -q "ERROR:  P0001: embedder is down" <<<"$out"'
check "a 10 MB consent subject is 54000" 'grep -q "ERROR:  54000: subject is too long" <<<"$out"'
check "no DETAIL carries a backtrace" '! grep -Eq "stack backtrace|backtrace::|rust_begin_unwind|^ +[0-9]+: |at \./|\.rs:[0-9]+:[0-9]+" <<<"$out"'
[ $fail = 0 ] || { echo "$out"; exit 1; }
