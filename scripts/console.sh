#!/usr/bin/env bash
# The operator's console against the local cluster, in one command: sets up everything (as
# scripts/demo.sh does), makes a database memory_fabric_console with a tenant "acme", roles and a
# few candidates waiting for a human (one that contradicts a memory), builds the console and
# serves it on http://127.0.0.1:8088 until Ctrl-C.
#   bash scripts/console.sh [--listen 127.0.0.1:8088]
# Sign in as console_ben or console_cleo (reviewers) or console_admin, with any password: the
# local cluster trusts its own socket, so PostgreSQL asks none. A real deployment points --dsn at
# a host whose pg_hba.conf rule asks for a password (scram-sha-256); README.md, "The operator's
# console".
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
mf_psql -d postgres -q -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
mf_psql -d "$db" -q -v ON_ERROR_STOP=1 <<'SQL'
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
mf_log "building the console"
cargo build --release -q -p memory-fabric-console
mf_log "serving http://$listen (sign in as console_ben, console_cleo or console_admin; any password on this local cluster); Ctrl-C stops it"
exec ./target/release/memory-fabric-console --listen "$listen" --dsn "host=$MF_PGHOST port=$MF_PGPORT dbname=$db"
