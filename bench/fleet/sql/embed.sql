-- the embedder alone, on the shard: the capture text embedded as capture embeds it (both built-in models)
\set u random(1, 1000000000000)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT builtin_model FROM memory_fabric._embed_query(:tenant, 'Customer ' || :u || ' prefers email on Fridays about the renewal.');
COMMIT;
