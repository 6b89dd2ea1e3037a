//! `memory_fabric.approve()`: a reviewer approves a queued candidate, which is promoted; for a
//! contradiction, the reviewer's resolution says what the promotion does with the memory it
//! contradicts.

use crate::pipeline::promotion::approve;
use pgrx::prelude::*;

#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _approve(candidate_id: Option<&str>, approver: Option<&str>, notes: Option<&str>, resolution: Option<&str>) -> String {
    let id = crate::args::require_text("candidate_id", candidate_id);
    let approver = crate::args::require_name("approver", approver);
    let notes = crate::args::require_note("notes", notes);
    let resolution = crate::args::require_note("resolution", resolution);
    Spi::connect_mut(|client| approve(client, &id, &approver, notes, resolution))
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.approve(candidate_id text, approver text, notes text DEFAULT NULL, resolution text DEFAULT NULL)
RETURNS memory_fabric.promoted_memory
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._approve(approve.candidate_id, approve.approver, approve.notes, approve.resolution);
    v_row memory_fabric.promoted_memory;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.promoted_memory AS m WHERE m.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.approve IS
    'Approve a queued candidate (the approver must differ from its actor) and promote it; for a contradiction, resolution supersede or coexist says what becomes of the memory it contradicts';
REVOKE ALL ON FUNCTION memory_fabric.approve(text, text, text, text), memory_fabric._approve(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.approve(text, text, text, text) TO memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "approve",
    requires = [_approve],
);
