//! `memory_fabric.review_candidate()`: the verdict for one candidate.

use crate::pipeline::review::review;
use pgrx::prelude::*;

/// Internal: the body of memory_fabric.review_candidate(). Returns the review id.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _review(candidate_id: Option<&str>) -> String {
    let id = crate::args::require_text("candidate_id", candidate_id);
    Spi::connect_mut(|client| review(client, &id, None))
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.review_candidate(candidate_id text)
RETURNS memory_fabric.reviews
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._review(review_candidate.candidate_id);
    v_row memory_fabric.reviews;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.reviews AS r WHERE r.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.review_candidate IS
    'Review a candidate: trust, dedup, contradiction, tier and priority; queue durable ones for a human';
REVOKE ALL ON FUNCTION memory_fabric.review_candidate(text), memory_fabric._review(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.review_candidate(text) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "review_candidate",
    requires = [_review],
);
