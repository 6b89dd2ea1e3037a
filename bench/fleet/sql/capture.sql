-- one capture, pinned to the tenant (-D tenant=…); a fresh user each time: no neighbour, no duplicate
\set u random(1, 1000000000000)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT id FROM memory_fabric.capture_memory(:tenant, 'Customer ' || :u || ' prefers email on Fridays about the renewal.', 'agent', 'INTERNAL', user_id => 'u' || :u, intent_id => 'support');
COMMIT;
