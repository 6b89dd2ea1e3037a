//! `memory_fabric.promote()`: the only way into promoted_memory.

use crate::pipeline::promotion::promote;
use crate::error::raise;
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;

#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _promote(candidate_id: Option<&str>, approver: Option<&str>) -> String {
    let id = crate::args::require_text("candidate_id", candidate_id);
    let approver = approver.map(|a| crate::args::require_name("approver", Some(a)));
    Spi::connect_mut(|client| {
        // The approver's name is what metrics count as a human promotion: an agent cannot give one.
        if approver.is_some() && !crate::security::caller_powers(client).0 {
            raise(Error::new(Kind::Privilege, format!("role \"{}\" cannot name an approver", crate::security::caller_name(client)))
                .detail("Only a role that may approve (a reviewer or an admin) promotes under a person's name.")
                .hint("Call memory_fabric.promote() without approver."));
        }
        promote(client, &id, approver.as_deref(), false)
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.promote(candidate_id text, approver text DEFAULT NULL)
RETURNS memory_fabric.promoted_memory
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._promote(promote.candidate_id, promote.approver);
    v_row memory_fabric.promoted_memory;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.promoted_memory AS m WHERE m.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.promote IS
    'Promote a reviewed candidate: the only way into promoted_memory';
REVOKE ALL ON FUNCTION memory_fabric.promote(text, text), memory_fabric._promote(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.promote(text, text) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "promote",
    requires = [_promote],
);
