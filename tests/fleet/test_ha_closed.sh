#!/usr/bin/env bash
# An --ha fleet is as closed as the plain one (issue 39, item 2; router/HA.md "Authentication"):
# run by tests/fleet/run_ha.sh on its fleet, with the variables of `scripts/fleet.sh env`. TAP lines.
#  1. As an OS user that is not the fleet's (nobody), no connection to the monitor, any node or the
#     router succeeds: TCP as the superuser, as pg_auto_failover's roles and as an application role,
#     with and without TLS, to each database and for replication; the sockets in the fleet's
#     directories, and where PostgreSQL puts them by default.
#  2. The sockets are in directories only the fleet's OS user may enter; the password file is 0600
#     in a 0700 directory; no pg_hba.conf has a trust rule but for sockets, nor a rule for TCP but
#     hostssl scram-sha-256 for pg_auto_failover's roles (read from each node's pg_hba_file_rules).
#  3. The fleet's own TCP works (TLS, the generated password), and without the password it does not.
#  4. No generated password is on a command line, or in a file of the fleet but the password file.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
: "${MF_HA_DIR:?} ${MF_HA_PORT:?} ${MF_HA_SOCK:?} ${MF_FLEET_SOCK:?} ${MF_FLEET_PORT:?} ${MF_FLEET_DIR:?}"
PSQL=$MF_PG_BINDIR/psql
PGPASS=$MF_HA_DIR/secrets/pgpass
fail=0
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; fail=1; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
nobody() { (cd / && runuser -u nobody -- env -i PATH=/usr/bin:/bin "$@"); }
shards=$(cat "$MF_FLEET_DIR/shards")
ports="$MF_HA_PORT"
for ((k = 0; k < shards; k++)); do ports+=" $(( MF_HA_PORT + 1 + 2 * k )) $(( MF_HA_PORT + 2 + 2 * k ))"; done

# 1. nobody
tried=0 got_in=""
for port in $ports; do
  for user in postgres autoctl_node pgautofailover_replicator pgautofailover_monitor fo_agent; do
    for db in postgres pg_auto_failover "$MF_FLEET_DB"; do
      for ssl in disable require; do
        tried=$((tried + 1))
        if nobody "$PSQL" -X -w -At "host=127.0.0.1 port=$port dbname=$db user=$user sslmode=$ssl connect_timeout=3" \
             -c "SELECT 1" >/dev/null 2>&1; then got_in+=" $user@127.0.0.1:$port/$db($ssl)"; fi
      done
    done
    tried=$((tried + 1))
    if nobody "$PSQL" -X -w -At "host=127.0.0.1 port=$port dbname=postgres user=$user replication=database sslmode=prefer connect_timeout=3" \
         -c "IDENTIFY_SYSTEM" >/dev/null 2>&1; then got_in+=" $user@127.0.0.1:$port(replication)"; fi
  done
  for dir in "$MF_HA_SOCK" /var/run/postgresql /tmp; do
    tried=$((tried + 1))
    if nobody "$PSQL" -X -w -At "host=$dir port=$port dbname=postgres user=postgres" -c "SELECT 1" >/dev/null 2>&1; then
      got_in+=" postgres@$dir:$port"
    fi
  done
done
tried=$((tried + 1))
if nobody "$PSQL" -X -w -At "host=$MF_FLEET_SOCK port=$MF_FLEET_PORT dbname=$MF_FLEET_DB user=postgres" -c "SELECT 1" >/dev/null 2>&1; then
  got_in+=" postgres@router"
fi
if [ -z "$got_in" ]; then ok "as the OS user nobody, none of $tried connections to the monitor, the $(( shards * 2 )) nodes and the router succeeds"
else nok "as the OS user nobody, connections succeed:$got_in"; fi
e=$(nobody "$PSQL" -X -w -At "host=127.0.0.1 port=$MF_HA_PORT dbname=postgres user=postgres sslmode=require" -c "SELECT 1" 2>&1 | head -n1)
echo "# e.g. the superuser over TCP: $e"

# 2. directories, files, pg_hba
mode() { stat -c '%a %U' "$1"; }
check "the nodes' socket directory is 0700, the fleet's OS user's ($(mode "$MF_HA_SOCK"))" [ "$(mode "$MF_HA_SOCK")" = "700 postgres" ]
check "the router's socket directory too ($(mode "$MF_FLEET_SOCK"))" [ "$(mode "$MF_FLEET_SOCK")" = "700 postgres" ]
check "the password file is 0600 in a 0700 directory ($(mode "$PGPASS"), $(mode "$(dirname "$PGPASS")"))" \
  [ "$(mode "$PGPASS") $(mode "$(dirname "$PGPASS")")" = "600 postgres 700 postgres" ]
nobody cat "$PGPASS" >/dev/null 2>&1 && nok "nobody reads the password file" || ok "nobody cannot read the password file"
bad=""
for port in $ports; do
  for db in postgres; do
    rules=$("$PSQL" -X -At "host=$MF_HA_SOCK port=$port dbname=$db user=postgres" -c \
      "SELECT type, array_to_string(user_name, ','), auth_method FROM pg_hba_file_rules WHERE error IS NULL ORDER BY line_number" 2>&1)
    while IFS='|' read -r type users auth; do
      case "$type|$auth" in
        local\|trust) ;;
        hostssl\|scram-sha-256) case $users in autoctl_node|pgautofailover_replicator|pgautofailover_monitor) ;; *) bad+=" $port:$type:$users:$auth" ;; esac ;;
        *) bad+=" $port:$type:$users:$auth" ;;
      esac
    done <<<"$rules"
  done
done
if [ -z "$bad" ]; then ok "pg_hba.conf of the monitor and every node: trust on sockets only, TCP only hostssl scram-sha-256 for pg_auto_failover's roles"
else nok "pg_hba.conf rules that open more:$bad"; fi

# 3. the fleet's own connections over TCP: TLS and the password; not without it
as_pg() { (cd / && runuser -u postgres -- env -i PATH=/usr/bin:/bin "$@"); }
s=$(as_pg env PGPASSFILE="$PGPASS" "$PSQL" -X -w -At "host=127.0.0.1 port=$MF_HA_PORT dbname=pg_auto_failover user=autoctl_node sslmode=require" \
    -c "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()" 2>&1)
check "the fleet's OS user reaches the monitor over TCP as autoctl_node with the generated password, over TLS ($s)" [ "$s" = t ]
primary_port=$("$PSQL" -X -At "host=$MF_HA_SOCK port=$MF_HA_PORT dbname=pg_auto_failover user=postgres" -c \
  "SELECT nodeport FROM pgautofailover.node WHERE formationid = 'shard0' AND reportedstate IN ('primary', 'wait_primary') LIMIT 1")
s=$(as_pg env PGPASSFILE="$PGPASS" "$PSQL" -X -w -At "host=127.0.0.1 port=$primary_port dbname=postgres user=pgautofailover_replicator replication=database sslmode=require" \
    -c "IDENTIFY_SYSTEM" 2>&1 | cut -d'|' -f1 | head -n1)
check "... and shard 0's primary for replication as pgautofailover_replicator (system $s)" grep -qE '^[0-9]+$' <<<"$s"
s=$(as_pg env PGPASSFILE="$MF_HA_DIR/secrets/none" "$PSQL" -X -w -At "host=127.0.0.1 port=$MF_HA_PORT dbname=pg_auto_failover user=autoctl_node sslmode=require" \
    -c "SELECT 1" 2>&1 | head -n1)
check "without the password it does not ($s)" [ "$s" != 1 ]

# 4. the passwords: on no command line, in no other file of the fleet
# (the test itself keeps them off command lines: matched in the shell, grep reads them from a pipe)
procs=$(ps -eo args=)
leaks=""
while IFS=: read -r _ _ _ role pw; do
  [ -n "$pw" ] || continue
  [[ $procs == *"$pw"* ]] && leaks+=" $role:process-list"
  f=$(grep -rlF --exclude-dir=base --exclude-dir=pg_wal -f <(printf '%s\n' "$pw") "$MF_HA_DIR" "$MF_FLEET_DIR/log" 2>/dev/null |
      grep -vx "$PGPASS" | head -n3)
  [ -z "$f" ] || leaks+=" $role:$f"
done < "$PGPASS"
check "no generated password is on a command line or in a file of the fleet but $PGPASS${leaks:+:$leaks}" [ -z "$leaks" ]
exit $fail
