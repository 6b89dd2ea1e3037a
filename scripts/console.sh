#!/usr/bin/env bash
# The operator's console against the local cluster, in one command: sets up everything (as
# scripts/demo.sh does), makes a database memory_fabric_console with a tenant "acme", roles and a
# few candidates waiting for a human (one that contradicts a memory), builds the console and
# serves it on http://127.0.0.1:8088 until Ctrl-C.
#   bash scripts/console.sh [--listen 127.0.0.1:8088]
# Sign in as console_ben or console_cleo (reviewers) or console_admin, with the password printed
# at the end: each run gives the demo roles new random passwords, and pg_hba.conf rules for this
# database alone (the rest of the local cluster keeps its rules) ask every role for one
# (scram-sha-256), as a real deployment must; README.md, "The operator's console". The console
# refuses superusers whatever the rules say.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
listen=127.0.0.1:8088
[ "${1:-}" = --listen ] && listen=$2
bash "$MF_ROOT/scripts/setup.sh"
cd "$MF_ROOT"
mkdir -p "$MF_BUILD/logs"
mf_log "building and installing the extension"
bash "$MF_ROOT/scripts/install.sh"
bash "$MF_ROOT/scripts/cluster.sh" start
db=memory_fabric_console

# pg_hba.conf rules for $db alone, between these marks, above the cluster's own rules: every role
# gives its password (scram-sha-256). Taken out while this script sets the database up as the
# superuser (over the socket the cluster trusts), put back after; the file keeps its owner.
hba_begin="# >>> scripts/console.sh: $db asks every role for a password"
hba_end="# <<< scripts/console.sh"
hba=$(mf_psql -d postgres -Atc "SHOW hba_file")
hba_rules() { # $1: with or without the console's rules
  local rest
  rest=$(awk -v b="$hba_begin" -v e="$hba_end" '$0 == b {skip = 1; next} $0 == e {skip = 0; next} !skip' "$hba")
  {
    if [ "$1" = with ]; then
      printf '%s\n' "$hba_begin"
      printf '%-7s %-23s %-9s %-15s %s\n' local "$db" all "" scram-sha-256 \
        host "$db" all 127.0.0.1/32 scram-sha-256 host "$db" all ::1/128 scram-sha-256
      printf '%s\n' "$hba_end"
    fi
    printf '%s\n' "$rest"
  } > "$hba.console.tmp"
  cat "$hba.console.tmp" > "$hba"
  rm -f "$hba.console.tmp"
  mf_psql -d postgres -q -Atc "SELECT pg_catalog.pg_reload_conf()" >/dev/null
  # a rule PostgreSQL cannot read would leave the old ones in force: say so
  local bad
  bad=$(mf_psql -d postgres -Atc "SELECT string_agg(line_number || ': ' || error, '; ') FROM pg_catalog.pg_hba_file_rules WHERE error IS NOT NULL")
  [ -z "$bad" ] || mf_die "pg_hba.conf ($hba): $bad"
}
hba_rules without

mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
# a new password for each demo role, every run (printed at the end)
new_password() { head -c 18 /dev/urandom | base64 | tr -d '/+=\n' | cut -c1-20; }
pw_ben=$(new_password); pw_cleo=$(new_password); pw_admin=$(new_password); pw_ana=$(new_password); pw_agent=$(new_password)
mf_psql -d "$db" -q -o /dev/null -v ON_ERROR_STOP=1 -v pw_ana="$pw_ana" -v pw_ben="$pw_ben" -v pw_cleo="$pw_cleo" \
  -v pw_admin="$pw_admin" -v pw_agent="$pw_agent" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION memory_fabric CASCADE;
DO $$
DECLARE r text[];
BEGIN
    FOREACH r SLICE 1 IN ARRAY ARRAY[['console_ana', 'reviewer'], ['console_ben', 'reviewer'], ['console_cleo', 'reviewer'],
                                     ['console_admin', 'admin'], ['console_agent', 'agent']] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r[1]) THEN
            EXECUTE format('CREATE ROLE %I LOGIN IN ROLE %I', r[1], 'memory_fabric_' || r[2]);
        END IF;
        PERFORM memory_fabric.grant_tenant(r[1], 'acme');
    END LOOP;
END $$;
SET password_encryption = 'scram-sha-256';
ALTER ROLE console_ana PASSWORD :'pw_ana';
ALTER ROLE console_ben PASSWORD :'pw_ben';
ALTER ROLE console_cleo PASSWORD :'pw_cleo';
ALTER ROLE console_admin PASSWORD :'pw_admin';
ALTER ROLE console_agent PASSWORD :'pw_agent';
-- as the agent: a promoted memory, then a correction of it that a reviewer must look at
SET ROLE console_agent;
SET memory_fabric.tenant_id = 'acme';
SELECT memory_fabric.promote(c.id) FROM memory_fabric.capture_memory('acme', 'Customer cus_42 wants paper invoices sent to the Porto office.',
    'agent', 'INTERNAL', user_id => 'cus_42', evidence_refs => '["ticket:8812"]') c,
    LATERAL memory_fabric.review_candidate(c.id) r;
RESET ROLE;
-- as a reviewer (an operator's facts are durable: they wait for a second person)
SET ROLE console_ana;
SET memory_fabric.tenant_id = 'acme';
SELECT memory_fabric.review_candidate(c.id)
FROM (VALUES ('Customer cus_42 does not want paper invoices sent to the Porto office.', 'cus_42', '["ticket:8840"]'),
             ('Refunds over 500 EUR need a manager''s approval.', NULL, '["policy:refunds-2026"]'),
             ('The Lisbon depot closes at 18:00 on weekdays.', NULL, '["web:forum/depots", "ticket:8901"]')) v(t, u, e),
     LATERAL memory_fabric.capture_memory('acme', v.t, 'operator', 'INTERNAL', user_id => v.u,
                                          evidence_refs => v.e::jsonb, actor => 'op:ana') c;
RESET ROLE;
SQL
hba_rules with
mf_log "building the console"
cargo build --release -q -p memory-fabric-console
mf_log "serving http://$listen; Ctrl-C stops it. Sign in as (role / password):"
printf '    %-14s %s   (reviewer)\n' console_ben "$pw_ben" console_cleo "$pw_cleo" >&2
printf '    %-14s %s   (admin)\n' console_admin "$pw_admin" >&2
printf '    %-14s %s   (reviewer; captured the waiting candidates, so may not approve them)\n' console_ana "$pw_ana" >&2
exec ./target/release/memory-fabric-console --listen "$listen" --dsn "host=$MF_PGHOST port=$MF_PGPORT dbname=$db"
