#!/usr/bin/env bash
# pg_auto_failover for the memory_fabric fleet (issue 33, "High availability"; router/HA.md).
# A sourceable library (functions mf_ha_*) and a command:
#   bash scripts/fleet_ha.sh start  [--groups N] [--base DIR] [--port P]
#   bash scripts/fleet_ha.sh status [--base DIR] [--port P]
#   bash scripts/fleet_ha.sh uri K  [--base DIR] [--port P]      # group K's libpq connection string
#   bash scripts/fleet_ha.sh failover-test [--group K] [--kill node|postmaster] [--base DIR] [--port P]
#   bash scripts/fleet_ha.sh stop   [--purge] [--base DIR] [--port P]
# One pg_auto_failover monitor and, per group (shard) K, a formation "shardK" with two nodes,
# shardK-a and shardK-b (a primary and a synchronous secondary, either may be the primary), on
# 127.0.0.1 only:
#   monitor      port P                  (default 26500, $MF_HA_PORT)
#   shardK-a     port P + 1 + 2K
#   shardK-b     port P + 2 + 2K
# Each group's database ($MF_HA_DB, default memory_fabric) holds `memory_fabric` (created on the
# primary; the secondary gets it by replication). State under DIR (default $MF_STATE/fleet-ha):
# monitor/, shardK-a/, shardK-b/ (PGDATA), log/ (one log per pg_autoctl service), config/, share/,
# run/ (pg_autoctl's XDG directories, so nothing is written to the postgres user's home), sock/
# and secrets/ (below).
# Authentication, as closed as the plain fleet (router/HA.md "Authentication"):
#   * Unix sockets in DIR/sock, a directory of mode 0700 owned by the OS user running the nodes:
#     `local all all trust` there lets only that user (the router's server is one) and root in.
#     Clients, the router included, use the sockets (mf_ha_conninfo).
#   * TCP (127.0.0.1 only) carries what pg_auto_failover needs between the monitor and the nodes
#     and nothing else: TLS (self-signed certificates, --ssl-self-signed) and scram-sha-256 for its
#     three roles (autoctl_node on the monitor; pgautofailover_replicator, replication and
#     pg_rewind, and pgautofailover_monitor, health checks, on the nodes); no other role, the
#     superuser included, has a pg_hba.conf entry on TCP. pg_hba.conf is ours (--skip-pg-hba): each
#     data directory that starts a group (and the monitor's) is made by initdb here with it and the
#     socket directory, before pg_autoctl adopts it; a secondary copies both by pg_basebackup.
#   * The passwords are generated once into DIR/secrets/pgpass (mode 0600, in a 0700 directory),
#     which every pg_autoctl and server finds through PGPASSFILE (the postmaster passes it to the
#     walreceiver and the health checks); the roles get their SCRAM verifiers by SQL on a socket,
#     from a pipe. No password is on a command line, in an environment or in a log.
# As root, pg_autoctl and postgres run as the postgres OS user.
# Idempotent: start creates what is missing and runs what is stopped; stop stops what runs.

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MF_HA_DIR=${MF_HA_DIR:-$MF_STATE/fleet-ha}
MF_HA_PORT=${MF_HA_PORT:-26500}   # below the ephemeral port range (32768 up): the nodes listen on TCP
MF_HA_DB=${MF_HA_DB:-memory_fabric}
MF_HA_HOST=${MF_HA_HOST:-127.0.0.1}
# the nodes' Unix sockets (owner-only) and the generated passwords, under DIR (again when --base
# changes it); MF_HA_SOCK set by the caller is kept
MF_HA_SOCK_GIVEN=${MF_HA_SOCK:-}
mf_ha_paths() {
  MF_HA_SOCK=${MF_HA_SOCK_GIVEN:-$MF_HA_DIR/sock}
  if [ $(( ${#MF_HA_SOCK} + 20 )) -gt 100 ]; then
    MF_HA_SOCK=/tmp/memory_fabric-ha-$MF_HA_PORT
  fi
  MF_HA_PGPASS=$MF_HA_DIR/secrets/pgpass
}
mf_ha_paths
# pg_auto_failover's roles, each with a generated password (TLS + scram-sha-256 on TCP)
MF_HA_ROLES="autoctl_node pgautofailover_replicator pgautofailover_monitor"
# How long a client waits for one host of a group before trying the other (libpq connect_timeout).
MF_HA_CONNECT_TIMEOUT=${MF_HA_CONNECT_TIMEOUT:-2}
# Failover timing (router/HA.md): the monitor's health checks and timeouts (ms), and each keeper's
# network partition timeout (s), which must stay below the monitor's primary_demote_timeout: an
# isolated primary demotes itself before the monitor may promote its secondary.
MF_HA_HEALTH_CHECK_PERIOD_MS=${MF_HA_HEALTH_CHECK_PERIOD_MS:-1000}
MF_HA_HEALTH_CHECK_TIMEOUT_MS=${MF_HA_HEALTH_CHECK_TIMEOUT_MS:-1000}
MF_HA_HEALTH_CHECK_RETRIES=${MF_HA_HEALTH_CHECK_RETRIES:-1}
MF_HA_HEALTH_CHECK_RETRY_DELAY_MS=${MF_HA_HEALTH_CHECK_RETRY_DELAY_MS:-500}
MF_HA_UNHEALTHY_TIMEOUT_MS=${MF_HA_UNHEALTHY_TIMEOUT_MS:-3000}
MF_HA_DEMOTE_TIMEOUT_MS=${MF_HA_DEMOTE_TIMEOUT_MS:-8000}
MF_HA_PARTITION_TIMEOUT_S=${MF_HA_PARTITION_TIMEOUT_S:-5}
MF_HA_SHARED_BUFFERS=${MF_HA_SHARED_BUFFERS:-128MB}

mf_ha_port() {  # monitor | K a|b
  if [ "$1" = monitor ]; then echo "$MF_HA_PORT"; return; fi
  echo $(( MF_HA_PORT + 1 + 2 * $1 + $([ "$2" = b ] && echo 1 || echo 0) ))
}
mf_ha_pgdata() { if [ "$1" = monitor ]; then echo "$MF_HA_DIR/monitor"; else echo "$MF_HA_DIR/shard$1-$2"; fi; }
# pg_autoctl's connection to the monitor: TCP, TLS, the password from PGPASSFILE (never in the URI)
mf_ha_monitor_uri() { echo "postgres://autoctl_node@$MF_HA_HOST:$(mf_ha_port monitor)/pg_auto_failover?sslmode=require"; }

# Group K's connection string, libpq key=value form: both nodes' sockets, and only the read-write
# one is taken. This is what a PL/Proxy partition (p<K>) lists; psql and psycopg take it too, as the
# OS user that runs the nodes (or root).
mf_ha_conninfo() {  # K [dbname]
  local k=$1 db=${2:-$MF_HA_DB}
  printf 'host=%s,%s port=%s,%s dbname=%s target_session_attrs=read-write connect_timeout=%s' \
    "$MF_HA_SOCK" "$MF_HA_SOCK" "$(mf_ha_port "$k" a)" "$(mf_ha_port "$k" b)" "$db" "$MF_HA_CONNECT_TIMEOUT"
}
# One node, directly (a standby too): for hot-standby reads and checks.
mf_ha_node_conninfo() { printf 'host=%s port=%s dbname=%s connect_timeout=%s' "$MF_HA_SOCK" "$(mf_ha_port "$1" "$2")" "${3:-$MF_HA_DB}" "$MF_HA_CONNECT_TIMEOUT"; }

# pg_autoctl as the postgres OS user (as root), with a clean environment: its configuration and
# state files go under the base directory (XDG_*), and PATH finds PostgreSQL 15's pg_ctl.
mf_ha_env() {
  local home=$HOME
  mf_is_root && home=$(getent passwd postgres | cut -d: -f6)
  env -i PATH="$MF_PG_BINDIR:/usr/local/bin:/usr/bin:/bin" HOME="$home" LANG=C.UTF-8 \
    XDG_CONFIG_HOME="$MF_HA_DIR/config" XDG_DATA_HOME="$MF_HA_DIR/share" XDG_RUNTIME_DIR="$MF_HA_DIR/run" \
    PG_CONFIG="$MF_PG_CONFIG" PGHOST="$MF_HA_SOCK" PGPASSFILE="$MF_HA_PGPASS" "$@"
}
MF_HA_RUNUSER=$(command -v runuser || echo /usr/sbin/runuser)
mf_ha_as_pg() { if mf_is_root; then (cd / && mf_ha_env "$MF_HA_RUNUSER" -u postgres -- "$@"); else (cd / && mf_ha_env "$@"); fi; }
mf_ha_autoctl() { mf_ha_as_pg pg_autoctl "$@"; }
mf_ha_config_set() {  # pgdata key value: only when it differs (a set makes a running pg_autoctl reload)
  [ "$(mf_ha_autoctl config get --pgdata "$1" "$2" 2>/dev/null)" = "$3" ] ||
    mf_ha_autoctl config set --pgdata "$1" "$2" "$3" >/dev/null
}

mf_ha_psql() {  # conninfo, psql args… (as postgres, the superuser)
  local ci=$1; shift
  "$MF_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$ci user=postgres" "$@"
}
mf_ha_monitor_sql() { "$MF_PG_BINDIR/psql" -X -At -v ON_ERROR_STOP=1 "host=$MF_HA_SOCK port=$(mf_ha_port monitor) dbname=pg_auto_failover user=postgres connect_timeout=2" -c "$1"; }

mf_ha_packages() {
  command -v pg_autoctl >/dev/null && [ -f "$("$MF_PG_CONFIG" --sharedir)/extension/pgautofailover.control" ] && return
  mf_log "installing pg_auto_failover (postgresql-$MF_PG_MAJOR-auto-failover, pg-auto-failover-cli)"
  mf_sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends \
    "postgresql-$MF_PG_MAJOR-auto-failover" pg-auto-failover-cli >/dev/null
}

mf_ha_prepare_dirs() {
  mkdir -p "$MF_HA_DIR/log" "$MF_HA_DIR/config" "$MF_HA_DIR/share" "$MF_HA_DIR/run" "$MF_HA_DIR/secrets" "$MF_HA_SOCK"
  chmod 700 "$MF_HA_DIR/run" "$MF_HA_DIR/secrets" "$MF_HA_SOCK"
  if mf_is_root; then
    chown postgres:postgres "$MF_HA_DIR" "$MF_HA_DIR/log" "$MF_HA_DIR/config" "$MF_HA_DIR/share" "$MF_HA_DIR/run" \
      "$MF_HA_DIR/secrets" "$MF_HA_SOCK"
    runuser -u postgres -- test -w "$MF_HA_DIR" ||
      mf_die "the postgres user cannot write $MF_HA_DIR; pass --base (or set MF_HA_DIR) to a directory it can use"
  fi
}

# The passwords of pg_auto_failover's roles, generated once (libpq's password file format). A
# fleet made before them (trust on 127.0.0.1) is refused: it must be purged, not patched.
mf_ha_secrets() {
  if [ -f "$MF_HA_PGPASS" ]; then return; fi
  if [ -f "$(mf_ha_pgdata monitor)/PG_VERSION" ]; then
    mf_die "$MF_HA_DIR was made with trust authentication on 127.0.0.1: stop it and remove it (scripts/fleet_ha.sh stop --purge), then start again"
  fi
  local tmp=$MF_HA_PGPASS.new
  (umask 077; python3 - $MF_HA_ROLES >"$tmp" <<'GEN'
import secrets, sys
for role in sys.argv[1:]:
    print(f"*:*:*:{role}:{secrets.token_urlsafe(24)}")
GEN
  )
  if mf_is_root; then chown postgres:postgres "$tmp"; fi
  mv "$tmp" "$MF_HA_PGPASS"
  mf_log "passwords of $MF_HA_ROLES generated in $MF_HA_PGPASS (mode 0600)"
}

# The SCRAM verifier of a role's password in the password file, computed here: the statement that
# sets it carries no password.
mf_ha_verifier() {  # role
  python3 - "$MF_HA_PGPASS" "$1" <<'GEN'
import base64, hashlib, hmac, os, sys
path, role = sys.argv[1:3]
pw = next(l.rstrip("\n").split(":", 4)[4] for l in open(path) if l.split(":")[3] == role)
salt, rounds = os.urandom(16), 4096
salted = hashlib.pbkdf2_hmac("sha256", pw.encode(), salt, rounds)
client = hmac.new(salted, b"Client Key", "sha256").digest()
b64 = lambda x: base64.b64encode(x).decode()
print(f"SCRAM-SHA-256${rounds}:{b64(salt)}${b64(hashlib.sha256(client).digest())}:"
      f"{b64(hmac.new(salted, b'Server Key', 'sha256').digest())}")
GEN
}

# Sets the passwords of roles on a node (through its socket) unless they already work over TCP.
mf_ha_passwords() {  # port db role…
  local port=$1 db=$2 role; shift 2
  for role in "$@"; do
    if mf_ha_as_pg "$MF_PG_BINDIR/psql" -X -w -At "host=$MF_HA_HOST port=$port dbname=$db user=$role sslmode=require connect_timeout=2" \
         -c "SELECT 1" >/dev/null 2>&1; then continue; fi
    printf "ALTER ROLE %s PASSWORD '%s';\n" "$role" "$(mf_ha_verifier "$role")" |
      "$MF_PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "host=$MF_HA_SOCK port=$port dbname=postgres user=postgres" >/dev/null ||
      mf_die "port $port: could not set the password of $role"
  done
}

# A data directory made here, before pg_autoctl adopts it (the monitor's, or a group's first node):
# its sockets in DIR/sock, and a pg_hba.conf with no trust on TCP. A group's second node copies both.
mf_ha_initdb() {  # pgdata monitor|node
  local d=$1 kind=$2 log
  [ -f "$d/PG_VERSION" ] && return
  log=$MF_HA_DIR/log/$(basename "$d")-initdb.log
  mkdir -p "$d"
  if mf_is_root; then chown postgres:postgres "$d"; fi
  chmod 700 "$d"
  mf_as_pg "$MF_PG_BINDIR/initdb" -D "$d" -U postgres -E UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=reject \
    >"$log" 2>&1 || { cat "$log" >&2; mf_die "$d: initdb failed"; }
  echo "unix_socket_directories = '$MF_HA_SOCK'" | mf_as_pg tee -a "$d/postgresql.conf" >/dev/null
  {
    echo "# memory_fabric fleet (scripts/fleet_ha.sh); pg_autoctl does not edit this file (--skip-pg-hba)."
    echo "# Sockets: in $MF_HA_SOCK, which only the nodes' OS user can enter."
    echo "local all all trust"
    echo "# TCP: TLS and a password, for pg_auto_failover's roles only; nothing else, the superuser included."
    if [ "$kind" = monitor ]; then
      echo "hostssl pg_auto_failover autoctl_node $MF_HA_HOST/32 scram-sha-256"
    else
      echo "hostssl replication pgautofailover_replicator $MF_HA_HOST/32 scram-sha-256"
      echo "hostssl all pgautofailover_replicator $MF_HA_HOST/32 scram-sha-256"
      echo "hostssl all pgautofailover_monitor $MF_HA_HOST/32 scram-sha-256"
    fi
  } | mf_as_pg tee "$d/pg_hba.conf" >/dev/null
}

# Is pg_autoctl running for this PGDATA? Its supervisor's pid file names a live process. (Not
# `pg_autoctl status`: it answers "not running" while a service restarts after a reload.)
mf_ha_running() { [ -d "$1" ] && mf_ha_alive "$1"; }
# The pid of the pg_autoctl supervisor for this PGDATA, or nothing.
mf_ha_pid() {
  local f; f=$(find "$MF_HA_DIR/run" -path "*$1/pg_autoctl.pid" 2>/dev/null | head -n1)
  [ -n "$f" ] && head -n1 "$f" 2>/dev/null
}

# Is the pg_autoctl supervisor of this PGDATA still alive (running, or still shutting down)?
mf_ha_alive() { local p; p=$(mf_ha_pid "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

mf_ha_launch() {  # pgdata name: `pg_autoctl run` in the background, detached, logging to log/NAME.log
  local d=$1 name=$2 log=$MF_HA_DIR/log/$2.log i
  if mf_ha_running "$d"; then mf_log "$name: pg_autoctl is running"; return; fi
  mf_log "$name: pg_autoctl run (log $log)"
  (mf_ha_as_pg setsid pg_autoctl run --pgdata "$d" >>"$log" 2>&1 </dev/null &)
  for ((i = 0; i < 100; i++)); do
    mf_ha_running "$d" && return
    sleep 0.2
  done
  tail -n 20 "$log" >&2; mf_die "$name: pg_autoctl did not start"
}

# Settings of our own, in a file included after pg_autoctl's (postgresql-auto-failover.conf), so
# they win: pg_autoctl sizes shared_buffers at a quarter of the machine's memory, for each node.
mf_ha_tune() {  # pgdata, extra lines…
  local d=$1; shift
  local f=$d/postgresql-mf-ha.conf line="include_if_exists 'postgresql-mf-ha.conf'"
  {
    echo "# memory_fabric fleet (scripts/fleet_ha.sh); included last from postgresql.conf"
    echo "shared_buffers = '$MF_HA_SHARED_BUFFERS'"
    echo "max_connections = 100"
    echo "log_line_prefix = '%m [%p] %q%u@%d '"
    local l; for l in "$@"; do echo "$l"; done
  } | mf_as_pg tee "$f.new" >/dev/null
  if ! cmp -s "$f" "$f.new"; then mf_as_pg mv "$f.new" "$f"; else mf_as_pg rm -f "$f.new"; fi
  grep -qxF "$line" "$d/postgresql.conf" || echo "$line" | mf_as_pg tee -a "$d/postgresql.conf" >/dev/null
}

mf_ha_start_monitor() {
  local d; d=$(mf_ha_pgdata monitor)
  if [ ! -f "$d/PG_VERSION" ] || ! [ -f "$MF_HA_DIR/config/pg_autoctl$d/pg_autoctl.cfg" ]; then
    mf_log "monitor: pg_autoctl create monitor on port $(mf_ha_port monitor)"
    local t0=$SECONDS
    mf_ha_initdb "$d" monitor
    mf_ha_autoctl create monitor --pgdata "$d" --pgctl "$MF_PG_BINDIR/pg_ctl" --pgport "$(mf_ha_port monitor)" \
      --hostname "$MF_HA_HOST" --skip-pg-hba --ssl-self-signed >>"$MF_HA_DIR/log/monitor-create.log" 2>&1 ||
      { tail -n 20 "$MF_HA_DIR/log/monitor-create.log" >&2; mf_die "monitor: create failed"; }
    mf_log "monitor: created in $(( SECONDS - t0 ))s"
  fi
  mf_ha_config_set "$d" postgresql.listen_addresses "$MF_HA_HOST"
  mf_ha_tune "$d" \
    "pgautofailover.health_check_period = $MF_HA_HEALTH_CHECK_PERIOD_MS" \
    "pgautofailover.health_check_timeout = $MF_HA_HEALTH_CHECK_TIMEOUT_MS" \
    "pgautofailover.health_check_max_retries = $MF_HA_HEALTH_CHECK_RETRIES" \
    "pgautofailover.health_check_retry_delay = $MF_HA_HEALTH_CHECK_RETRY_DELAY_MS" \
    "pgautofailover.node_considered_unhealthy_timeout = $MF_HA_UNHEALTHY_TIMEOUT_MS" \
    "pgautofailover.primary_demote_timeout = $MF_HA_DEMOTE_TIMEOUT_MS"
  mf_ha_launch "$d" monitor
  local i
  for ((i = 0; i < 150; i++)); do
    mf_ha_monitor_sql "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.2
  done
  mf_ha_monitor_sql "SELECT pg_reload_conf()" >/dev/null || mf_die "monitor: not reachable on port $(mf_ha_port monitor)"
  mf_ha_passwords "$(mf_ha_port monitor)" pg_auto_failover autoctl_node
}

# The nodes of formation shardK as "name reportedstate goalstate" lines.
mf_ha_nodes() { mf_ha_monitor_sql "SELECT nodename, reportedstate, goalstate FROM pgautofailover.node WHERE formationid = 'shard$1' ORDER BY nodename"; }
mf_ha_primary() {  # K: the name (shardK-a or shardK-b) of the group's primary, or nothing
  mf_ha_monitor_sql "SELECT nodename FROM pgautofailover.node WHERE formationid = 'shard$1' AND reportedstate IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate ORDER BY nodename LIMIT 1"
}
# Wait until the group's reported states (sorted, each equal to its goal) are the ones given.
mf_ha_wait_states() {  # K "state state" timeout_s
  local k=$1 want=$2 limit=${3:-120} t0=$SECONDS got
  while :; do
    got=$(mf_ha_monitor_sql "SELECT string_agg(reportedstate::text, ' ' ORDER BY reportedstate::text) FROM pgautofailover.node WHERE formationid = 'shard$k' AND reportedstate = goalstate HAVING count(*) = (SELECT count(*) FROM pgautofailover.node WHERE formationid = 'shard$k')" 2>/dev/null || true)
    [ "$got" = "$want" ] && return 0
    if [ $(( SECONDS - t0 )) -ge "$limit" ]; then
      mf_log "shard$k: states are not \"$want\" after ${limit}s:"; mf_ha_nodes "$k" >&2 || true
      return 1
    fi
    sleep 0.5
  done
}

mf_ha_create_node() {  # K a|b
  local k=$1 m=$2 d name=shard$1-$2
  d=$(mf_ha_pgdata "$k" "$m")
  local registered; registered=$(mf_ha_monitor_sql "SELECT count(*) FROM pgautofailover.node WHERE nodename = '$name' AND reportedstate <> 'init'")
  if [ -f "$d/PG_VERSION" ] && [ "$registered" = 1 ] && ! [ -f "$MF_HA_DIR/share/pg_autoctl$d/pg_autoctl.init" ]; then return; fi
  mf_log "$name: pg_autoctl create postgres on port $(mf_ha_port "$k" "$m") (formation shard$k)"
  local t0=$SECONDS
  # the group's first node starts from a data directory made here; a later one is a base backup
  if [ -z "$(mf_ha_monitor_sql "SELECT 1 FROM pgautofailover.node WHERE formationid = 'shard$k' AND nodename <> '$name'")" ]; then
    mf_ha_initdb "$d" node
  fi
  mf_ha_autoctl create postgres --pgdata "$d" --pgctl "$MF_PG_BINDIR/pg_ctl" --pgport "$(mf_ha_port "$k" "$m")" \
    --pghost "$MF_HA_SOCK" --listen "$MF_HA_HOST" --hostname "$MF_HA_HOST" --name "$name" --formation "shard$k" \
    --monitor "$(mf_ha_monitor_uri)" --dbname "$MF_HA_DB" --skip-pg-hba --ssl-self-signed \
    --replication-quorum true --candidate-priority 50 >>"$MF_HA_DIR/log/$name-create.log" 2>&1 ||
    { tail -n 30 "$MF_HA_DIR/log/$name-create.log" >&2; mf_die "$name: create failed"; }
  mf_log "$name: created in $(( SECONDS - t0 ))s"
}

mf_ha_start_node() {  # K a|b
  local k=$1 m=$2 d; d=$(mf_ha_pgdata "$k" "$m")
  mf_ha_create_node "$k" "$m"
  mf_ha_config_set "$d" timeout.network_partition_timeout "$MF_HA_PARTITION_TIMEOUT_S"
  mf_ha_tune "$d"
  mf_ha_launch "$d" "shard$k-$m"
}

mf_ha_start_group() {  # K
  local k=$1 t0=$SECONDS
  if [ -z "$(mf_ha_monitor_sql "SELECT 1 FROM pgautofailover.formation WHERE formationid = 'shard$k'")" ]; then
    mf_log "shard$k: pg_autoctl create formation shard$k (database $MF_HA_DB)"
    mf_ha_autoctl create formation --monitor "$(mf_ha_monitor_uri)" --formation "shard$k" --kind pgsql \
      --dbname "$MF_HA_DB" --enable-secondary >>"$MF_HA_DIR/log/monitor-create.log" 2>&1 ||
      { tail -n 20 "$MF_HA_DIR/log/monitor-create.log" >&2; mf_die "shard$k: create formation failed"; }
  fi
  # a group that exists: its last primary first (the monitor's record), so that its secondary
  # never runs alone
  if [ -f "$(mf_ha_pgdata "$k" a)/PG_VERSION" ] && [ -f "$(mf_ha_pgdata "$k" b)/PG_VERSION" ]; then
    local name
    for name in $(mf_ha_monitor_sql "SELECT nodename FROM pgautofailover.node WHERE formationid = 'shard$k' ORDER BY reportedstate IN ('primary', 'wait_primary', 'single') DESC, nodename"); do
      mf_ha_start_node "$k" "${name##*-}"
    done
  fi
  # the first node alone (it becomes the primary), then the second (it base-backups from it)
  if [ -z "$(mf_ha_monitor_sql "SELECT 1 FROM pgautofailover.node WHERE formationid = 'shard$k'")" ] ||
     [ -f "$(mf_ha_pgdata "$k" a)/PG_VERSION" ]; then
    mf_ha_start_node "$k" a
    [ -f "$(mf_ha_pgdata "$k" b)/PG_VERSION" ] || mf_ha_wait_states "$k" single 120 || mf_die "shard$k-a: did not become single"
  fi
  # replication (the second node's base backup included) and health checks authenticate with the
  # generated passwords: set on the primary (they replicate)
  local p; p=$(mf_ha_primary "$k")
  if [ -n "$p" ]; then
    mf_ha_wait_ready "$(mf_ha_port "$k" "${p##*-}")" || mf_die "$p: not accepting connections"
    mf_ha_passwords "$(mf_ha_port "$k" "${p##*-}")" postgres pgautofailover_replicator pgautofailover_monitor
  fi
  mf_ha_start_node "$k" b
  mf_ha_wait_states "$k" "primary secondary" 180 || mf_die "shard$k: no primary and secondary"
  mf_log "shard$k: primary and secondary up ($(( SECONDS - t0 ))s)"
  # synchronous replication: the secondary is in the write quorum (replication-quorum true), so
  # synchronous_standby_names names it (ANY 1 (…)) and a commit waits for it
  local ssn; ssn=$(mf_ha_psql "$(mf_ha_conninfo "$k")" -Atc "SHOW synchronous_standby_names")
  [ -n "$ssn" ] || mf_die "shard$k: synchronous_standby_names is empty on the primary"
  mf_log "shard$k: synchronous_standby_names = $ssn"
  if [ "$(mf_ha_psql "$(mf_ha_conninfo "$k")" -Atc "SELECT count(*) FROM pg_extension WHERE extname = 'memory_fabric'")" = 0 ]; then
    mf_log "shard$k: CREATE EXTENSION memory_fabric CASCADE (on the primary; it replicates)"
    mf_ha_psql "$(mf_ha_conninfo "$k")" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS memory_fabric CASCADE"
  fi
}

# Wait until a node's server accepts connections on its socket (pg_autoctl restarts it as it goes).
mf_ha_wait_ready() {  # port
  local i
  for ((i = 0; i < 150; i++)); do
    "$MF_PG_BINDIR/psql" -X -At "host=$MF_HA_SOCK port=$1 dbname=postgres user=postgres connect_timeout=2" -c "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  mf_log "port $1: the server does not accept connections"; return 1
}

mf_ha_groups() { mf_ha_monitor_sql "SELECT substr(formationid, 6) FROM pgautofailover.formation WHERE formationid ~ '^shard[0-9]+$' ORDER BY substr(formationid, 6)::int" 2>/dev/null; }
mf_ha_group_count() { cat "$MF_HA_DIR/groups" 2>/dev/null || echo 0; }

# Start (create when missing) the monitor and groups 0..N-1. Existing groups are kept.
mf_ha_start() {  # N
  local n=${1:-} have; have=$(mf_ha_group_count)
  [ -z "$n" ] && n=$(( have > 0 ? have : 2 ))
  [ "$n" -ge "$have" ] || n=$have
  mf_ha_packages
  [ -f "$("$MF_PG_CONFIG" --sharedir)/extension/memory_fabric.control" ] ||
    mf_die "memory_fabric is not installed (cargo pgrx install --release, see README)"
  mf_ha_prepare_dirs
  mf_ha_secrets
  local t0=$SECONDS k
  mf_ha_start_monitor
  echo "$n" > "$MF_HA_DIR/groups"
  for ((k = 0; k < n; k++)); do mf_ha_start_group "$k"; done
  mf_log "pg_auto_failover up: monitor on port $(mf_ha_port monitor), $n groups ($(( SECONDS - t0 ))s)"
}

mf_ha_stop() {  # [--purge]
  local k d n; n=$(mf_ha_group_count)
  # the secondaries first, then the primaries (stopping a primary first would fail it over), the
  # monitor last
  if [ -d "$MF_HA_DIR" ] && mf_ha_monitor_sql "SELECT 1" >/dev/null 2>&1; then
    local order; order=$(mf_ha_monitor_sql "SELECT nodename FROM pgautofailover.node ORDER BY reportedstate IN ('primary', 'single', 'wait_primary'), nodename")
  fi
  local name
  for name in ${order:-} $(for ((k = 0; k < n; k++)); do echo "shard$k-a shard$k-b"; done); do
    d=$MF_HA_DIR/$name
    if mf_ha_running "$d"; then
      mf_log "$name: pg_autoctl stop"
      mf_ha_autoctl stop --pgdata "$d" >/dev/null 2>&1 || true
      mf_ha_wait_stopped "$d" "$name"
    fi
  done
  d=$(mf_ha_pgdata monitor)
  if mf_ha_running "$d"; then
    mf_log "monitor: pg_autoctl stop"
    mf_ha_autoctl stop --pgdata "$d" >/dev/null 2>&1 || true
    mf_ha_wait_stopped "$d" monitor
  fi
  if [ "${1:-}" = --purge ]; then
    case $MF_HA_DIR in /|"") mf_die "refusing to remove '$MF_HA_DIR'" ;; esac
    mf_log "removing $MF_HA_DIR"
    rm -rf "$MF_HA_DIR"
    case $MF_HA_SOCK in "$MF_HA_DIR"/*) ;; /tmp/memory_fabric-ha-*) rm -rf "$MF_HA_SOCK" ;; esac
  fi
}
mf_ha_wait_stopped() {  # pgdata name
  local i
  for ((i = 0; i < 150; i++)); do
    if ! mf_ha_alive "$1" && ! [ -f "$1/postmaster.pid" ]; then return; fi
    sleep 0.2
  done
  mf_log "$2: still running after 30s (immediate stop)"
  mf_ha_autoctl stop --pgdata "$1" --immediate >/dev/null 2>&1 || true
}

mf_ha_status() {
  if ! [ -d "$MF_HA_DIR/monitor" ]; then echo "no pg_auto_failover fleet in $MF_HA_DIR"; return 3; fi
  if ! mf_ha_monitor_sql "SELECT 1" >/dev/null 2>&1; then echo "monitor (port $(mf_ha_port monitor)) is not running"; return 3; fi
  local k rc=0
  echo "monitor: $(mf_ha_monitor_uri)"
  for k in $(mf_ha_groups); do
    echo
    mf_ha_autoctl show state --monitor "$(mf_ha_monitor_uri)" --formation "shard$k" 2>&1 || rc=3
    echo "shard$k connection string: $(mf_ha_conninfo "$k")"
    echo "shard$k uri (pg_autoctl show uri): $(mf_ha_autoctl show uri --monitor "$(mf_ha_monitor_uri)" --formation "shard$k" 2>/dev/null)"
    [ -n "$(mf_ha_primary "$k")" ] || rc=3
  done
  echo
  echo "base $MF_HA_DIR, logs $MF_HA_DIR/log"
  return $rc
}

# The client of the failover test: writes through a connection string until a stop file appears,
# one transaction per row (memory_fabric.capture_memory as an agent role, the tenant pinned), and
# appends "ok EPOCH ID" after each acknowledged commit, "err EPOCH MESSAGE" after each failure.
mf_ha_writer_py() {
  cat <<'PY'
import os, sys, time
import psycopg
dsn, tenant, out, stop, label = sys.argv[1:6]
conn, n = None, 0
with open(out, "a", buffering=1) as f:
    while not os.path.exists(stop):
        try:
            if conn is None or conn.closed:
                conn = psycopg.connect(dsn)
            n += 1
            with conn.transaction():
                conn.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
                (cid,) = conn.execute(
                    "SELECT id FROM memory_fabric.capture_memory(%s, %s, 'agent', 'INTERNAL')",
                    (tenant, f"{label} write {n} at {time.time():.3f}")).fetchone()
            f.write(f"ok {time.time():.3f} {cid}\n")
        except Exception as e:  # the connection is lost, or no host is read-write yet
            msg = (str(e).splitlines() or [type(e).__name__])[0]
            f.write(f"err {time.time():.3f} {type(e).__name__}: {msg}\n")
            try:
                conn.close()
            except Exception:
                pass
            conn = None
            time.sleep(0.05)
PY
}

mf_ha_python() {
  if [ -z "${MF_PY:-}" ]; then
    # shellcheck source=../clients/python/tests/env.sh
    . "$MF_ROOT/clients/python/tests/env.sh" >&2
  fi
  echo "$MF_PY"
}

# An agent role with a grant for the test tenant, on group K's primary (roles are per cluster;
# both replicate to the secondary).
mf_ha_test_role() {  # K tenant
  mf_ha_psql "$(mf_ha_conninfo "$1")" -v tenant="$2" >/dev/null <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mf_ha_agent') THEN
    CREATE ROLE mf_ha_agent LOGIN IN ROLE memory_fabric_agent;
  END IF;
END $$;
SELECT memory_fabric.grant_tenant('mf_ha_agent', :'tenant');
SQL
}

# Hot standby: promote one memory on the primary, then recall it on the secondary (node a|b) as the
# agent role, within 10 s (replay).
mf_ha_standby_recall() {  # K tenant node(a|b)
  local k=$1 tenant=$2 m=$3 text user; user=probe_$(date +%s%N); text="Hot standby probe for $user."
  mf_ha_psql "$(mf_ha_conninfo "$k")" -v tenant="$tenant" -v text="$text" -v user="$user" >/dev/null <<'SQL'
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :'tenant', true);
SELECT memory_fabric.promote(c.id)
FROM memory_fabric.capture_memory(:'tenant', :'text', 'agent', 'INTERNAL', user_id => :'user') c,
     memory_fabric.review_candidate(c.id) r;
COMMIT;
SQL
  local i got ci; ci="$(mf_ha_node_conninfo "$k" "$m") user=mf_ha_agent"
  for ((i = 0; i < 50; i++)); do
    got=$("$MF_PG_BINDIR/psql" -X -At -v ON_ERROR_STOP=1 "$ci" -v tenant="$tenant" -v text="$text" -v user="$user" 2>&1 <<'SQL' || true
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :'tenant', true) \g /dev/null
SELECT pg_is_in_recovery(), count(*) FROM memory_fabric.recall(:'tenant', 'ha.check', user_id => :'user') WHERE text = :'text';
COMMIT;
SQL
)
    case $got in *"t|1"*) echo "shard$k-$m (hot standby, pg_is_in_recovery = t): recall as mf_ha_agent finds the memory promoted on the primary"; return 0 ;; esac
    sleep 0.2
  done
  echo "shard$k-$m: recall on the standby did not find the memory: $got" >&2
  return 1
}

# Kill -9 group K's primary: "node" kills its pg_autoctl (supervisor and services) and its
# postmaster together, as if the machine were lost; "postmaster" kills the postmaster only (its
# pg_autoctl restarts it in place, usually without a failover).
mf_ha_kill_primary() {  # K node|postmaster → prints the killed node's name
  local k=$1 mode=$2 name d pids="" p
  name=$(mf_ha_primary "$k"); [ -n "$name" ] || mf_die "shard$k has no primary"
  d=$MF_HA_DIR/$name
  local pm; pm=$(head -n1 "$d/postmaster.pid")
  if [ "$mode" = node ]; then
    local sup; sup=$(mf_ha_pid "$d")
    pids="$sup"
    local frontier=$sup next
    while [ -n "$frontier" ]; do
      next=""
      for p in $frontier; do next+=" $(ps -o pid= --ppid "$p" | tr '\n' ' ')"; done
      next=$(echo $next); pids+=" $next"; frontier=$next
    done
  fi
  pids+=" $pm"
  # shellcheck disable=SC2086
  kill -9 $pids 2>/dev/null || true
  echo "$name"
}

mf_ha_failover_test() {  # K node|postmaster
  local k=${1:-0} mode=${2:-node} py tenant=ha_t
  [ -n "$(mf_ha_primary "$k")" ] || mf_die "shard$k is not running (bash scripts/fleet_ha.sh start)"
  mf_ha_wait_states "$k" "primary secondary" 60 || mf_die "shard$k: no primary and secondary to fail over"
  py=$(mf_ha_python)
  local work=$MF_HA_DIR/failover-test; rm -rf "$work"; mkdir -p "$work"
  mf_ha_writer_py > "$work/writer.py"
  local groups g; groups=$(mf_ha_groups)
  for g in $groups; do mf_ha_test_role "$g" "$tenant"; done

  local primary secondary
  primary=$(mf_ha_primary "$k"); secondary=shard$k-$([ "${primary##*-}" = a ] && echo b || echo a)
  mf_log "shard$k: primary $primary, secondary $secondary"
  mf_ha_standby_recall "$k" "$tenant" "${secondary##*-}"

  mf_log "writers: one per group, through each group's connection string, as mf_ha_agent"
  local pids=()
  for g in $groups; do
    "$py" "$work/writer.py" "$(mf_ha_conninfo "$g") user=mf_ha_agent" "$tenant" "$work/shard$g.log" "$work/stop" "shard$g" &
    pids+=($!)
  done
  sleep 3
  local t_kill killed; t_kill=$(date +%s.%N)
  killed=$(mf_ha_kill_primary "$k" "$mode")
  mf_log "kill -9 at $t_kill: $killed ($mode)"
  # the failover: the secondary promoted, as the monitor reports it
  local t0=$SECONDS newp=""
  while [ $(( SECONDS - t0 )) -lt 90 ]; do
    newp=$(mf_ha_primary "$k" 2>/dev/null || true)
    if [ -n "$newp" ] && [ "$newp" != "$killed" ]; then break; fi
    if [ "$mode" = postmaster ] && [ "$newp" = "$killed" ] && [ $(( SECONDS - t0 )) -ge 10 ]; then break; fi
    newp=""; sleep 0.2
  done
  local t_promoted; t_promoted=$(date +%s.%N)
  # writes must resume through the same connection string
  local i
  for ((i = 0; i < 300; i++)); do
    awk -v t="$t_kill" '$1 == "ok" && $2 > t {f = 1} END {exit !f}' "$work/shard$k.log" && break
    sleep 0.2
  done
  sleep 3
  touch "$work/stop"; wait "${pids[@]}" || true
  mf_ha_autoctl show state --monitor "$(mf_ha_monitor_uri)" --formation "shard$k" 2>&1 || true

  # the report
  local rc=0 res
  # outage: from the kill to the first acknowledged write after the first failure that followed it
  # (a backend of a killed postmaster may still commit a statement or two before it notices)
  res=$(awk -v t="$t_kill" '
    $1 == "ok" { if ($2 <= t) { before++; last = $2 } else { after++; if (ferr && !back) back = $2; if (!ferr && !first) first = $2 } }
    $1 == "err" && $2 > t { errs++; if (!ferr) ferr = $2 }
    $1 == "ok" { if (prev && $2 - prev > gap) gap = $2 - prev; prev = $2 }
    END { if (!ferr) back = first; printf "%d %d %d %.3f %.3f %.3f %.3f\n", before, after, errs, last, ferr, back, gap }' "$work/shard$k.log")
  local before after errs last ferr back gap
  read -r before after errs last ferr back gap <<<"$res"
  echo "shard$k: killed $killed ($mode); primary now: ${newp:-none}"
  echo "shard$k: acknowledged writes: $before before the kill, $after after; $errs failed attempts"
  if [ "$after" -gt 0 ] && [ "$back" != 0.000 ]; then
    printf 'shard%s: writes failed from +%.2f s and resumed +%.2f s after the kill (longest gap between acknowledged writes %.2f s); the monitor reported a primary at +%.2f s\n' \
      "$k" "$(echo "$ferr - $t_kill" | bc)" "$(echo "$back - $t_kill" | bc)" "$gap" "$(echo "$t_promoted - $t_kill" | bc)"
    [ "$mode" = postmaster ] && [ "$newp" = "$killed" ] &&
      echo "shard$k: no failover: $killed's pg_autoctl restarted its postmaster in place (crash recovery)"
    echo "RESULT shard$k failover_seconds=$(printf %.2f "$(echo "$back - $t_kill" | bc)")"
  else
    echo "shard$k: writes did NOT resume"; rc=1
  fi
  # every acknowledged write is on the new primary
  awk '$1 == "ok" {print $3}' "$work/shard$k.log" > "$work/shard$k.acked"
  local missing
  missing=$(mf_ha_psql "$(mf_ha_conninfo "$k")" -At -c "CREATE TEMP TABLE acked (id text)" \
    -c "\\copy acked FROM '$work/shard$k.acked'" \
    -c "SELECT count(*) FROM acked a WHERE NOT EXISTS (SELECT 1 FROM memory_fabric.candidates c WHERE c.id = a.id)")
  if [ "$missing" = 0 ]; then echo "shard$k: all $(wc -l < "$work/shard$k.acked") acknowledged writes are present on $newp"
  else echo "shard$k: $missing acknowledged writes are MISSING"; rc=1; fi
  # the other groups never stopped
  for g in $groups; do
    [ "$g" = "$k" ] && continue
    res=$(awk '$1 == "ok" { if (prev && $2 - prev > gap) gap = $2 - prev; prev = $2; n++ } $1 == "err" { e++ }
               END { printf "%d %d %.3f", n, e, gap }' "$work/shard$g.log")
    read -r n e gap <<<"$res"
    echo "shard$g (not killed): $n acknowledged writes, $e errors, longest gap between acks ${gap} s"
    [ "$e" = 0 ] || rc=1
  done

  # the killed node comes back as the secondary (pg_rewind when needed): its pg_autoctl is started
  # again after a node kill; after a postmaster kill it is still running and does it alone
  if [ -n "$killed" ]; then
    t0=$SECONDS
    [ "$mode" = node ] && mf_ha_launch "$MF_HA_DIR/$killed" "$killed"
    if mf_ha_wait_states "$k" "primary secondary" 180; then
      echo "shard$k: $killed is back; the group is primary + secondary again after $(( SECONDS - t0 )) s"
      local p2; p2=$(mf_ha_primary "$k")
      mf_ha_standby_recall "$k" "$tenant" "$([ "${p2##*-}" = a ] && echo b || echo a)" || rc=1
    else
      echo "shard$k: $killed did not rejoin as the secondary"; rc=1
    fi
  fi
  echo "logs: $work, $MF_HA_DIR/log"
  return $rc
}

mf_ha_main() {
  set -euo pipefail
  local cmd=${1:-} groups="" purge="" group=0 kill=node args=()
  shift || true
  case $cmd in -h|--help|help) set -- --help ;; esac
  while [ $# -gt 0 ]; do
    case $1 in
      --groups) groups=$2; shift 2 ;;
      --base) MF_HA_DIR=$(realpath -m "$2"); shift 2 ;;
      --port) MF_HA_PORT=$2; shift 2 ;;
      --group) group=$2; shift 2 ;;
      --kill) kill=$2; shift 2 ;;
      --purge) purge=--purge; shift ;;
      -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; return 0 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  mf_ha_paths
  case $cmd in
    start) mf_ha_start "$groups" ;;
    stop) mf_ha_stop $purge ;;
    status) mf_ha_status ;;
    uri) mf_ha_conninfo "${args[0]:-0}"; echo ;;
    failover-test) mf_ha_failover_test "$group" "$kill" ;;
    *) echo "usage: bash scripts/fleet_ha.sh start|stop|status|uri K|failover-test [--groups N] [--base DIR] [--port P] [--group K] [--kill node|postmaster] [--purge]" >&2; return 2 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then mf_ha_main "$@"; fi
