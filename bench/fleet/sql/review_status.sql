-- a trivial call routed by the pin: the review status of one seeded candidate (-D cid=…)
BEGIN;
SELECT set_config('memory_fabric.tenant_id', :tenant, true);
SELECT stage FROM memory_fabric.review_status(:cid);
COMMIT;
