-- recall without a query (no embedding): the user's memories, newest first
\set u random(1, :nusers)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT count(*) FROM memory_fabric.recall(:tenant, 'support', user_id => 'u' || :u, classification_allowed => ARRAY['PUBLIC', 'INTERNAL']);
COMMIT;
