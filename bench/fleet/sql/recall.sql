-- recall by text of one of the seeded users (u1 … u:nusers), pinned to the tenant
\set u random(1, :nusers)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT count(*) FROM memory_fabric.recall(:tenant, 'support', user_id => 'u' || :u, classification_allowed => ARRAY['PUBLIC', 'INTERNAL'], query_text => 'how does this customer want to be contacted');
COMMIT;
