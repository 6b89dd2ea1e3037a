//! `memory_fabric.promote_pending()`: the bulk path for migrations. It walks a tenant's open
//! candidates in capture order, reviews each one that has no review yet, and promotes each whose
//! review lets it through without a human, in batches that each commit. The rules are those of
//! review_candidate() and promote() one call at a time: duplicates, contradictions that block and
//! candidates queued for a human stay where review put them. A candidate whose review is out of
//! date (what it was compared with changed since) is reviewed again, as promote() would ask, and
//! the run goes on.

use crate::pipeline::maintenance::{require_batch, require_no_transaction_block};
use crate::pipeline::promotion::promote_unless_stale;
use crate::pipeline::review::review;
use crate::rows;
use crate::security::require_tenant;
use crate::spi::{col, plan, INT4, TEXT, TIMESTAMPTZ};
use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;

/// Open candidates: not promoted, not erased, not rejected or replaced by an edit.
const OPEN: &str = "memory_fabric.candidates c WHERE c.tenant_id = $1 AND c.erased_at IS NULL \
     AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = c.id) \
     AND NOT EXISTS (SELECT 1 FROM memory_fabric.decisions d WHERE d.candidate_id = c.id \
                     AND d.action IN ('reject', 'edit'))";

/// Internal, for promote_pending(): how many candidates of the tenant are open.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, pg_temp)]
fn _promote_pending_count(tenant_id: Option<&str>, batch_size: Option<i32>) -> i64 {
    require_no_transaction_block("memory_fabric.promote_pending()");
    let tenant = crate::args::require_tenant_id(tenant_id);
    require_batch(batch_size, 200);
    Spi::connect(|client| {
        require_tenant(client, &tenant);
        client
            .select(&format!("SELECT count(*) FROM {OPEN}"), Some(1), &[tenant.as_str().into()])
            .and_then(|t| t.first().get_one::<i64>())
            .unwrap_or_else(|e| error!("memory_fabric: cannot count candidates: {e}"))
            .unwrap_or(0)
    })
}

/// Internal, for promote_pending(): one batch. The open candidates captured after the cursor
/// (captured_at, id), at most batch_size of them: each is reviewed if it has no review, and
/// promoted if its effective review lets it through without a human. Returns how many it looked
/// at (0: none is left after the cursor), reviewed and promoted, and the new cursor.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, pg_temp)]
fn _promote_pending_batch(
    tenant_id: Option<&str>,
    after_captured_at: Option<TimestampWithTimeZone>,
    after_id: Option<&str>,
    batch_size: Option<i32>,
) -> TableIterator<
    'static,
    (
        name!(looked, i32),
        name!(reviewed, i32),
        name!(promoted, i32),
        name!(last_captured_at, Option<TimestampWithTimeZone>),
        name!(last_id, Option<String>),
    ),
> {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let batch = require_batch(batch_size, 200);
    // planned for the tables as they are now, not as they were when the run (or the session) began
    crate::spi::forget_plans();
    let row = Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        let pick = format!(
            "SELECT c.id, c.captured_at FROM {OPEN} AND (c.captured_at, c.id) > (coalesce($2, '-infinity'), $3) \
             ORDER BY c.captured_at, c.id LIMIT $4"
        );
        let picked: Vec<(String, Option<TimestampWithTimeZone>)> = client
            .select(
                &*plan(client, &pick, &[TEXT, TIMESTAMPTZ, TEXT, INT4], false),
                None,
                &[tenant.as_str().into(), after_captured_at.into(), after_id.unwrap_or("").into(), batch.into()],
            )
            .unwrap_or_else(|e| error!("memory_fabric: cannot read candidates: {e}"))
            .map(|r| (col(&r, 1).unwrap_or_default(), col(&r, 2)))
            .collect();
        let (mut reviewed, mut promoted) = (0, 0);
        for (id, _) in &picked {
            pgrx::check_for_interrupts!();
            let r = match rows::effective_review(client, id) {
                Some(r) => r,
                None => {
                    review(client, id, None);
                    reviewed += 1;
                    rows::effective_review(client, id).unwrap_or_else(|| error!("memory_fabric: review of {id} vanished"))
                }
            };
            if r.promotable() && r.reviewer == "auto" {
                if promote_unless_stale(client, id).is_some() {
                    promoted += 1;
                } else {
                    // the memories changed since its review (a contradiction promoted since,
                    // say): reviewed again, as promote()'s error asks, and promoted if the new
                    // verdict lets it through; one stale review never stops the run
                    review(client, id, None);
                    reviewed += 1;
                    let again = rows::effective_review(client, id).unwrap_or_else(|| error!("memory_fabric: review of {id} vanished"));
                    if again.promotable() && again.reviewer == "auto" && promote_unless_stale(client, id).is_some() {
                        promoted += 1;
                    }
                }
            }
        }
        let last = picked.last().cloned();
        (picked.len() as i32, reviewed, promoted, last.as_ref().and_then(|l| l.1), last.map(|l| l.0))
    });
    TableIterator::once(row)
}

extension_sql!(
    r#"
-- A procedure that commits can be neither SECURITY DEFINER nor carry a SET clause: it runs as its
-- caller and names everything with its schema; each batch is a SECURITY DEFINER function that
-- checks the caller's tenant grant and pin on every call. CALL it outside a transaction block,
-- with the tenant pinned for the session (SET memory_fabric.tenant_id), since each COMMIT ends a
-- SET LOCAL. A cancelled run keeps every batch before the one it was in; calling it again
-- resumes: the candidates it finished are no longer open, or are reviewed already.
CREATE PROCEDURE memory_fabric.promote_pending(tenant_id text, batch_size integer DEFAULT 200)
LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    v_total    bigint;
    v_looked   bigint := 0;
    v_reviewed bigint := 0;
    v_promoted bigint := 0;
    v_at       timestamptz := '-infinity';
    v_id       text := '';
    b          record;
BEGIN
    v_total := memory_fabric._promote_pending_count(promote_pending.tenant_id, promote_pending.batch_size);
    IF v_total = 0 THEN
        RAISE NOTICE 'no candidate of tenant "%" is waiting for review or promotion', promote_pending.tenant_id;
        RETURN;
    END IF;
    LOOP
        SELECT x.looked, x.reviewed, x.promoted, x.last_captured_at, x.last_id INTO b
        FROM memory_fabric._promote_pending_batch(promote_pending.tenant_id, v_at, v_id, promote_pending.batch_size) AS x;
        EXIT WHEN b.looked = 0;
        v_looked := v_looked + b.looked;
        v_reviewed := v_reviewed + b.reviewed;
        v_promoted := v_promoted + b.promoted;
        v_at := b.last_captured_at;
        v_id := b.last_id;
        RAISE NOTICE '%', pg_catalog.format('%s of %s open candidates of tenant "%s" done (%s%%): %s reviewed, %s promoted',
            v_looked, greatest(v_total, v_looked), promote_pending.tenant_id, v_looked * 100 / greatest(v_total, v_looked),
            v_reviewed, v_promoted);
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE memory_fabric.promote_pending IS
    'Review a tenant''s unreviewed candidates and promote what needs no human, committing after every batch (resumable)';
REVOKE ALL ON FUNCTION memory_fabric._promote_pending_count(text, integer),
    memory_fabric._promote_pending_batch(text, timestamptz, text, integer) FROM PUBLIC;
REVOKE ALL ON PROCEDURE memory_fabric.promote_pending(text, integer) FROM PUBLIC;
-- the roles that may review and promote: the procedure, and the batch functions it calls as the caller
GRANT EXECUTE ON FUNCTION memory_fabric._promote_pending_count(text, integer),
    memory_fabric._promote_pending_batch(text, timestamptz, text, integer)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
GRANT EXECUTE ON PROCEDURE memory_fabric.promote_pending(text, integer)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin, @extowner@;
"#,
    name = "promote_pending",
    requires = [_promote_pending_count, _promote_pending_batch],
);
