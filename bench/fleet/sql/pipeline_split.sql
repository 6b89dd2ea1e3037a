-- the pipeline as three transactions, each pinned (what the router does: each routed call
-- commits on the shard). Directly this is the routed pipeline's baseline call for call.
\set u random(1, 1000000000000)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT id AS cid FROM memory_fabric.capture_memory(:tenant, 'Customer ' || :u || ' prefers email on Fridays about the renewal.', 'agent', 'INTERNAL', user_id => 'u' || :u, intent_id => 'support') \gset
COMMIT;
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT status FROM memory_fabric.review_candidate(:cid);
COMMIT;
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT id FROM memory_fabric.promote(:cid);
COMMIT;
