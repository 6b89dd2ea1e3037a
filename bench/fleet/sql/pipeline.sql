-- capture -> review -> promote, pinned to the tenant: -D tenant=… (latency) or, without it,
-- the client's own tenant :prefix || (client_id % 16) (throughput). Through the router each call
-- is its own routed call (and commits on the shard); directly they run in one shard transaction.
\set u random(1, 1000000000000)
\set k :client_id % 16
BEGIN;
SELECT set_config('memory_fabric.tenant_id', coalesce(nullif(:tenant, '-'), :prefix || :k), true) AS t \gset
SELECT id AS cid FROM memory_fabric.capture_memory(:t, 'Customer ' || :u || ' prefers email on Fridays about the renewal.', 'agent', 'INTERNAL', user_id => 'u' || :u, intent_id => 'support') \gset
SELECT status FROM memory_fabric.review_candidate(:cid);
SELECT id FROM memory_fabric.promote(:cid);
COMMIT;
