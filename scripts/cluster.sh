#!/usr/bin/env bash
# A private local PostgreSQL cluster for the demo and the tests.
#   scripts/cluster.sh start | stop | restart | status | psql [args…] | env
# Data directory: $MF_PGDATA (default target/mf/data, inside the ignored build area; /tmp when
# running as root in a checkout the postgres user cannot reach).
# Port: $MF_PGPORT (default 55432). Socket directory: $MF_PGHOST (default target/mf/sock).
# As root, the server runs as the postgres system user (initdb refuses root).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# RUST_BACKTRACE would put Rust backtraces into error DETAILs; the server never needs it.
pg_ctl() { mf_as_pg env -u RUST_BACKTRACE -u RUST_LIB_BACKTRACE "$MF_PG_BINDIR/pg_ctl" -D "$MF_PGDATA" "$@"; }

prepare_dirs() {
  mkdir -p "$MF_STATE" "$MF_PGHOST" "$MF_STATE/log"
  if mf_is_root; then
    chown postgres:postgres "$MF_PGHOST" "$MF_STATE/log"
    if ! runuser -u postgres -- test -x "$MF_STATE"; then
      mf_die "the postgres user cannot reach $MF_STATE; set MF_STATE to a directory it can use"
    fi
    [ -d "$MF_PGDATA" ] || { mkdir -p "$MF_PGDATA"; chown postgres:postgres "$MF_PGDATA"; chmod 700 "$MF_PGDATA"; }
  fi
}

is_running() { pg_ctl status >/dev/null 2>&1; }

start() {
  prepare_dirs
  if [ ! -f "$MF_PGDATA/PG_VERSION" ]; then
    mf_log "initdb $MF_PGDATA"
    mf_as_pg "$MF_PG_BINDIR/initdb" -D "$MF_PGDATA" -A trust -U "$MF_PGUSER" -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >> "$MF_PGDATA/postgresql.conf" <<CONF
# memory_fabric test cluster
listen_addresses = ''
unix_socket_directories = '$MF_PGHOST'
port = $MF_PGPORT
fsync = on
max_connections = 60
shared_buffers = 256MB
max_prepared_transactions = 10
log_min_messages = warning
CONF
  fi
  if is_running; then mf_log "cluster already running on port $MF_PGPORT"; return; fi
  mf_log "starting cluster on port $MF_PGPORT, socket $MF_PGHOST"
  pg_ctl -o "-p $MF_PGPORT -k $MF_PGHOST" -l "$MF_STATE/log/postgres.log" -w -t 60 start >/dev/null
}

stop() {
  if [ -f "$MF_PGDATA/PG_VERSION" ] && is_running; then
    mf_log "stopping cluster"
    pg_ctl -m fast -w -t 60 stop >/dev/null
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) if is_running; then echo "running on port $MF_PGPORT (socket $MF_PGHOST)"; else echo "stopped"; exit 3; fi ;;
  psql) shift; mf_psql "$@" ;;
  env) printf 'export PGHOST=%q PGPORT=%q PGUSER=%q\n' "$MF_PGHOST" "$MF_PGPORT" "$MF_PGUSER" ;;
  *) echo "usage: $0 start|stop|restart|status|psql [args]|env" >&2; exit 2 ;;
esac
