#!/usr/bin/env bash
# A sharded memory_fabric fleet on this machine (router/DESIGN.md):
#   scripts/fleet.sh start [--ha] [--shards N] | stop | status | roles | psql NODE [args…] | env
# NODE is `router` or `shardK` (K from 0). Each node is a PostgreSQL instance of its own:
#   shardK   port $MF_FLEET_PORT+1+K, database memory_fabric with memory_fabric and memory_fabric_shard
#   router   port $MF_FLEET_PORT,     database memory_fabric with memory_fabric_router (PL/Proxy), its
#            plproxy server "memory_fabric" listing every shard (p0 … pN-1)
# State: $MF_FLEET_DIR (default $MF_STATE/fleet): a data directory per node, their log files
# (log/NODE.log), and one socket directory that only the OS user running the nodes can enter.
# Nodes listen on that socket only (listen_addresses = ''), so trust authentication there lets a
# role connect as itself and nobody else on the machine reach a node; no password is used or
# written anywhere. The router reaches each shard as the role that called it (a PUBLIC user
# mapping without a user: PL/Proxy connects as current_user).
# Idempotent: start starts what is stopped and creates what is missing, updates the router's
# extensions to the version installed (shards first), and copies the router's roles; --shards N
# larger than the fleet adds shards (their partitions are appended to the server). A fleet is never
# shrunk.
# roles: the router is where roles are made. PL/Proxy connects to each shard as the calling role,
# so `roles` (memory_fabric_router.sync_roles()) creates on every shard the roles of the router
# that reach memory_fabric (members of memory_fabric_agent/_reviewer/_admin, directly or through
# other roles), with their LOGIN/INHERIT attributes and memberships, and revokes there a membership
# the router no longer has; start runs it too. A role only a shard has is reported, not changed.
# As root, the nodes run as the postgres OS user (initdb refuses root).
#
# --ha (router/HA.md, router/DESIGN.md §8): each shard K is a pg_auto_failover group instead of one
# instance (scripts/fleet_ha.sh), under $MF_FLEET_DIR/ha with ports relative to $MF_FLEET_PORT:
#   router       port $MF_FLEET_PORT (Unix socket only, as above)
#   monitor      port $MF_FLEET_PORT+1
#   shardK-a/-b  ports $MF_FLEET_PORT+2+2K, +3+2K  (either may be the primary)
# Their sockets are in $MF_FLEET_DIR/ha/sock (0700, as above), which clients and the router use;
# on 127.0.0.1 only pg_auto_failover's own roles connect, with TLS and passwords generated into
# $MF_FLEET_DIR/ha/secrets/pgpass (0600). The router's partition pK lists both nodes' sockets of
# group K with target_session_attrs=read-write (mf_ha_conninfo), so it follows a failover. The
# extensions are created on each group's primary and replicate to its secondary; so do roles and
# grants (`roles` copies the router's roles to each group's primary). The mode is recorded in
# $MF_FLEET_DIR/mode: later start/stop/status/psql/env follow it; a plain fleet never becomes an
# HA one or back. `psql shardK-a|shardK-b` reaches one node, a standby too.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MF_FLEET_DIR=${MF_FLEET_DIR:-$MF_STATE/fleet}
MF_FLEET_PORT=${MF_FLEET_PORT:-26400}   # below the ephemeral port range (32768 up): an --ha fleet listens on TCP
MF_FLEET_DB=${MF_FLEET_DB:-memory_fabric}
MF_FLEET_SOCK=${MF_FLEET_SOCK:-$MF_FLEET_DIR/sock}
if [ $(( ${#MF_FLEET_SOCK} + 20 )) -gt 100 ]; then
  MF_FLEET_SOCK=/tmp/memory_fabric-fleet-$MF_FLEET_PORT
fi
LOG=$MF_FLEET_DIR/log
# the pg_auto_failover groups of an --ha fleet: never the defaults of scripts/fleet_ha.sh's command
MF_HA_DIR=$MF_FLEET_DIR/ha
MF_HA_SOCK=$MF_HA_DIR/sock
MF_HA_PORT=$(( MF_FLEET_PORT + 1 ))
MF_HA_DB=$MF_FLEET_DB
# shellcheck source=fleet_ha.sh
. "$MF_ROOT/scripts/fleet_ha.sh"
is_ha() { [ "$(cat "$MF_FLEET_DIR/mode" 2>/dev/null)" = ha ]; }

pg_ctl_node() {  # node, args…
  local node=$1; shift
  mf_as_pg env -u RUST_BACKTRACE -u RUST_LIB_BACKTRACE "$MF_PG_BINDIR/pg_ctl" -D "$MF_FLEET_DIR/$node/data" "$@"
}
port_of() { case $1 in router) echo "$MF_FLEET_PORT" ;; shard*) echo $(( MF_FLEET_PORT + 1 + ${1#shard} )) ;; esac; }
node_psql() {  # node, db, args…
  local node=$1 db=$2; shift 2
  if [ "$node" != router ] && is_ha; then
    local ci
    case $node in
      shard*-a|shard*-b) local k=${node#shard}; ci=$(mf_ha_node_conninfo "${k%-*}" "${k##*-}" "$db") ;;
      shard*) ci=$(mf_ha_conninfo "${node#shard}" "$db") ;;   # the group's primary
      *) mf_die "no node $node" ;;
    esac
    "$MF_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$ci user=$MF_PGUSER" "$@"
    return
  fi
  "$MF_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$MF_FLEET_SOCK" -p "$(port_of "$node")" -U "$MF_PGUSER" -d "$db" "$@"
}
is_running() { [ -f "$MF_FLEET_DIR/$1/data/PG_VERSION" ] && pg_ctl_node "$1" status >/dev/null 2>&1; }
shard_count() { cat "$MF_FLEET_DIR/shards" 2>/dev/null || echo 0; }
nodes() { local n; n=$(shard_count); for ((k = 0; k < n; k++)); do echo "shard$k"; done; [ "$n" = 0 ] || echo router; }

prepare_dirs() {
  mkdir -p "$MF_FLEET_DIR" "$LOG" "$MF_FLEET_SOCK"
  chmod 700 "$MF_FLEET_SOCK"
  if mf_is_root; then
    chown postgres:postgres "$MF_FLEET_DIR" "$LOG" "$MF_FLEET_SOCK"
    runuser -u postgres -- test -x "$MF_FLEET_DIR" ||
      mf_die "the postgres user cannot reach $MF_FLEET_DIR; set MF_FLEET_DIR (or MF_STATE) to a directory it can use"
  fi
}

# The extensions the fleet installs must be in PostgreSQL's share directory.
check_extensions() {
  local ext; ext=$("$MF_PG_CONFIG" --sharedir)/extension
  [ -f "$ext/memory_fabric.control" ] || mf_die "memory_fabric is not installed (cargo pgrx install --release, see README)"
  [ -f "$ext/plproxy.control" ] || mf_die "PL/Proxy is not installed: apt-get install postgresql-$MF_PG_MAJOR-plproxy (scripts/setup.sh)"
  local src
  for src in "$MF_ROOT"/router/memory_fabric_router*.{control,sql} "$MF_ROOT"/router/shard/memory_fabric_shard*.{control,sql}; do
    if ! cmp -s "$src" "$ext/$(basename "$src")"; then
      mf_log "installing the router's extensions into $ext (make -C router install)"
      mf_sudo make -s -C "$MF_ROOT/router" install PG_CONFIG="$MF_PG_CONFIG" >/dev/null
      break
    fi
  done
}

init_node() {  # node
  local node=$1 data=$MF_FLEET_DIR/$1/data port; port=$(port_of "$1")
  [ -f "$data/PG_VERSION" ] && return
  mf_log "$node: initdb $data"
  mkdir -p "$data"
  if mf_is_root; then chown -R postgres:postgres "$MF_FLEET_DIR/$node"; fi
  chmod 700 "$data"
  mf_as_pg "$MF_PG_BINDIR/initdb" -D "$data" -A trust -U "$MF_PGUSER" -E UTF8 --locale=C.UTF-8 >"$LOG/$node-initdb.log" 2>&1 ||
    { cat "$LOG/$node-initdb.log" >&2; mf_die "$node: initdb failed"; }
  mf_as_pg tee -a "$data/postgresql.conf" >/dev/null <<CONF
# memory_fabric fleet node $node (scripts/fleet.sh)
listen_addresses = ''
unix_socket_directories = '$MF_FLEET_SOCK'
port = $port
max_connections = 100
shared_buffers = 128MB
max_prepared_transactions = 10
log_min_messages = warning
log_line_prefix = '%m [%p] %q%u@%d '
CONF
  # the socket only; the socket directory is private to the OS user running the nodes
  mf_as_pg tee "$data/pg_hba.conf" >/dev/null <<HBA
# memory_fabric fleet node $node: Unix socket only, in a directory only the nodes' OS user enters
local all all trust
HBA
}

start_node() {  # node
  local node=$1
  init_node "$node"
  if is_running "$node"; then mf_log "$node: running on port $(port_of "$node")"; return; fi
  mf_log "$node: starting on port $(port_of "$node") (log $LOG/$node.log)"
  mf_as_pg touch "$LOG/$node.log" 2>/dev/null || true
  pg_ctl_node "$node" -l "$LOG/$node.log" -w -t 60 start >/dev/null ||
    { tail -n 20 "$LOG/$node.log" >&2; mf_die "$node: did not start"; }
}

ensure_db() {  # node
  local node=$1
  if [ "$(node_psql "$node" postgres -Atc "SELECT count(*) FROM pg_database WHERE datname = '$MF_FLEET_DB'")" = 0 ]; then
    mf_log "$node: creating database $MF_FLEET_DB"
    node_psql "$node" postgres -c "CREATE DATABASE $MF_FLEET_DB"
  fi
}

setup_shard() {  # k
  local k=$1 node=shard$1
  ensure_db "$node"
  node_psql "$node" "$MF_FLEET_DB" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS memory_fabric CASCADE;
CREATE EXTENSION IF NOT EXISTS memory_fabric_shard;
ALTER EXTENSION memory_fabric_shard UPDATE;
INSERT INTO memory_fabric_shard.identity (shard, cluster) VALUES ($k, 'memory_fabric')
ON CONFLICT (only_row) DO NOTHING;
SQL
  local got; got=$(node_psql "$node" "$MF_FLEET_DB" -Atc "SELECT shard FROM memory_fabric_shard.identity")
  [ "$got" = "$k" ] || mf_die "$node: its database says it is shard $got"
}

partition() {
  if is_ha; then mf_ha_conninfo "$1" "$MF_FLEET_DB"; return; fi
  printf "host=%s port=%s dbname=%s connect_timeout=5" "$MF_FLEET_SOCK" "$(port_of "shard$1")" "$MF_FLEET_DB"
}

setup_router() {
  local n=$1
  ensure_db router
  node_psql router "$MF_FLEET_DB" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS memory_fabric_router CASCADE;
ALTER EXTENSION memory_fabric_router UPDATE;
SQL
  local have; have=$(node_psql router "$MF_FLEET_DB" -Atc \
    "SELECT count(*) FROM pg_foreign_server s, unnest(s.srvoptions) o WHERE s.srvname = 'memory_fabric' AND o ~ '^p[0-9]+='")
  local exists; exists=$(node_psql router "$MF_FLEET_DB" -Atc "SELECT count(*) FROM pg_foreign_server WHERE srvname = 'memory_fabric'")
  if [ "$exists" = 0 ]; then
    local opts="modular_mapping '1', connection_lifetime '1800'" k
    for ((k = 0; k < n; k++)); do opts+=", p$k '$(partition "$k")'"; done
    mf_log "router: creating the plproxy server memory_fabric with $n partitions"
    node_psql router "$MF_FLEET_DB" <<SQL
CREATE SERVER memory_fabric FOREIGN DATA WRAPPER plproxy OPTIONS ($opts);
CREATE USER MAPPING FOR PUBLIC SERVER memory_fabric;
GRANT USAGE ON FOREIGN SERVER memory_fabric TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
SQL
    if is_ha; then
      # reads that may run on a standby (memory_fabric_router.read_from = 'standby'): the same
      # groups, preferring a standby
      opts="modular_mapping '1', connection_lifetime '1800'"
      for ((k = 0; k < n; k++)); do opts+=", p$k '$(partition "$k" | sed 's/target_session_attrs=read-write/target_session_attrs=prefer-standby/')'"; done
      node_psql router "$MF_FLEET_DB" <<SQL
CREATE SERVER memory_fabric_ro FOREIGN DATA WRAPPER plproxy OPTIONS ($opts);
CREATE USER MAPPING FOR PUBLIC SERVER memory_fabric_ro;
GRANT USAGE ON FOREIGN SERVER memory_fabric_ro TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
SQL
    fi
  elif [ "$have" -lt "$n" ]; then
    # A tenant the directory does not list lives where the hash of its name puts it among the
    # shards there are: a new shard would move that place, and its calls would go where its rows
    # are not. So every tenant found on the shards there are (any row of it) is listed on the
    # shard that holds it first, in the transaction that adds the partitions.
    local add="" k rows="" found
    for ((k = have; k < n; k++)); do add+="${add:+, }ADD p$k '$(partition "$k")'"; done
    for ((k = 0; k < have; k++)); do
      found=$(node_psql "shard$k" "$MF_FLEET_DB" -Atc "SELECT string_agg(format('(%L, $k)', t), ', ' ORDER BY t) FROM (
          SELECT tenant_id FROM memory_fabric.candidates UNION SELECT tenant_id FROM memory_fabric.tenant_grants
          UNION SELECT tenant_id FROM memory_fabric.policies WHERE tenant_id <> '*'
          UNION SELECT tenant_id FROM memory_fabric.consents UNION SELECT tenant_id FROM memory_fabric.embedding_models) x(t)
        WHERE NOT EXISTS (SELECT 1 FROM memory_fabric_shard.retired r WHERE r.tenant_id = x.t AND r.state IN ('moved', 'incoming'))")
      [ -n "$found" ] && rows+="${rows:+, }$found"
    done
    mf_log "router: listing the tenants the shards hold, then adding partitions $have..$((n - 1)) to the plproxy server memory_fabric"
    node_psql router "$MF_FLEET_DB" -v ON_ERROR_STOP=1 <<SQL
BEGIN;
${rows:+INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES $rows ON CONFLICT (tenant_id) DO NOTHING;}
ALTER SERVER memory_fabric OPTIONS ($add);
COMMIT;
SQL
  elif [ "$have" -gt "$n" ]; then
    mf_die "router: the server lists $have shards and the fleet has $n"
  fi
}

# The router's roles and memberships on every shard (memory_fabric_router.sync_roles()): PL/Proxy
# connects to a shard as the calling role. Run by start (so a new shard gets them) and by `roles`.
sync_roles() {
  local out
  out=$(node_psql router "$MF_FLEET_DB" -At -F ' ' -c "SELECT shard, action, role_name, detail FROM memory_fabric_router.sync_roles()") ||
    mf_die "router: copying the roles to the shards failed"
  if [ -n "$out" ]; then
    while IFS= read -r line; do mf_log "roles: shard $line"; done <<<"$out"
  else
    mf_log "roles: every shard has the router's roles and memberships"
  fi
}

start() {
  local want=$1 ha=$2 n
  n=$(shard_count)
  if [ "$n" != 0 ]; then
    if is_ha && [ -z "$ha" ]; then ha=1; mf_log "an --ha fleet: starting it as one"; fi
    if [ -n "$ha" ] && ! is_ha; then mf_die "the fleet in $MF_FLEET_DIR is a plain one; --ha needs a fleet of its own (another MF_FLEET_DIR and MF_FLEET_PORT)"; fi
  fi
  [ -z "$want" ] && want=$(( n > 0 ? n : 2 ))
  [ "$want" -ge 1 ] || mf_die "--shards must be at least 1"
  [ "$want" -ge "$n" ] || mf_die "the fleet has $n shards; it is never shrunk (move the tenants off a shard first)"
  check_extensions
  prepare_dirs
  local k
  if [ -n "$ha" ]; then
    echo ha > "$MF_FLEET_DIR/mode"
    mf_ha_start "$want"     # the monitor, then each group: primary + synchronous secondary, memory_fabric
    for ((k = 0; k < want; k++)); do setup_shard "$k"; done
  else
    for ((k = 0; k < want; k++)); do start_node "shard$k"; setup_shard "$k"; done
  fi
  echo "$want" > "$MF_FLEET_DIR/shards"
  start_node router
  setup_router "$want"
  sync_roles
  mf_log "fleet up: $want shards${ha:+ (pg_auto_failover groups, monitor on port $MF_HA_PORT)}, router on port $MF_FLEET_PORT (socket $MF_FLEET_SOCK, database $MF_FLEET_DB)"
}

stop() {
  local node
  # the router first: no call is routed to a shard that is going away
  if is_ha; then
    if is_running router; then mf_log "router: stopping"; pg_ctl_node router -m fast -w -t 60 stop >/dev/null; fi
    mf_ha_stop
    return
  fi
  for node in router $(nodes | grep -v '^router$' || true); do
    if is_running "$node"; then
      mf_log "$node: stopping"
      pg_ctl_node "$node" -m fast -w -t 60 stop >/dev/null
    fi
  done
}

status() {
  local node rc=0 n; n=$(shard_count)
  if [ "$n" = 0 ]; then echo "no fleet in $MF_FLEET_DIR"; return 3; fi
  if is_ha; then
    if is_running router; then printf '%-8s running  port %s\n' router "$MF_FLEET_PORT"; else printf '%-8s stopped  port %s\n' router "$MF_FLEET_PORT"; rc=3; fi
    echo "router socket $MF_FLEET_SOCK, database $MF_FLEET_DB, logs $LOG"
    echo
    mf_ha_status || rc=3
    return $rc
  fi
  for node in $(nodes); do
    if is_running "$node"; then
      printf '%-8s running  port %s\n' "$node" "$(port_of "$node")"
    else
      printf '%-8s stopped  port %s\n' "$node" "$(port_of "$node")"; rc=3
    fi
  done
  echo "socket $MF_FLEET_SOCK, database $MF_FLEET_DB, logs $LOG"
  return $rc
}

cmd=${1:-}; shift || true
shards="" ha=""
case "$cmd" in
  start)
    while [ $# -gt 0 ]; do
      case $1 in
        --shards) shards=${2:?--shards needs a number}; shift 2 ;;
        --shards=*) shards=${1#--shards=}; shift ;;
        --ha) ha=1; shift ;;
        *) mf_die "unknown option $1" ;;
      esac
    done
    [ -z "$shards" ] || [[ $shards =~ ^[0-9]+$ ]] || mf_die "--shards needs a number"
    start "$shards" "$ha" ;;
  stop) stop ;;
  status) status ;;
  roles) [ "$(shard_count)" != 0 ] || mf_die "no fleet in $MF_FLEET_DIR"; sync_roles ;;
  psql) node=${1:?psql needs a node: router or shardK}; shift; node_psql "$node" "$MF_FLEET_DB" "$@" ;;
  env) printf 'export MF_FLEET_DIR=%q MF_FLEET_SOCK=%q MF_FLEET_PORT=%q MF_FLEET_DB=%q\n' \
         "$MF_FLEET_DIR" "$MF_FLEET_SOCK" "$MF_FLEET_PORT" "$MF_FLEET_DB"
       if is_ha; then printf 'export MF_FLEET_HA=1 MF_HA_DIR=%q MF_HA_PORT=%q MF_HA_DB=%q MF_HA_SOCK=%q\n' "$MF_HA_DIR" "$MF_HA_PORT" "$MF_HA_DB" "$MF_HA_SOCK"; fi ;;
  *) echo "usage: $0 start [--ha] [--shards N] | stop | status | roles | psql NODE [args] | env" >&2; exit 2 ;;
esac
