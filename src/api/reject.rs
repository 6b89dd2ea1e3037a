//! `memory_fabric.reject()`: a reviewer rejects a candidate for good.

use crate::pipeline::promotion::reject;
use pgrx::prelude::*;

#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _reject(candidate_id: Option<&str>, approver: Option<&str>, reason: Option<&str>) -> String {
    let id = crate::args::require_text("candidate_id", candidate_id);
    let approver = crate::args::require_name("approver", approver);
    let reason = crate::args::require_reason("reason", reason);
    Spi::connect_mut(|client| reject(client, &id, &approver, &reason))
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.reject(candidate_id text, approver text, reason text)
RETURNS memory_fabric.decisions
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._reject(reject.candidate_id, reject.approver, reject.reason);
    v_row memory_fabric.decisions;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.decisions AS d WHERE d.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.reject IS 'Reject a candidate; it can never be promoted';
REVOKE ALL ON FUNCTION memory_fabric.reject(text, text, text), memory_fabric._reject(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.reject(text, text, text) TO memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "reject",
    requires = [_reject],
);
