//! `memory_fabric.retract()`: an admin retracts a memory (never deleted).

use crate::pipeline::promotion::retract;
use pgrx::prelude::*;

#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _retract(memory_id: Option<&str>, reason: Option<&str>, retracted_by: Option<&str>) -> String {
    let id = crate::args::require_text("memory_id", memory_id);
    let reason = crate::args::require_reason("reason", reason);
    let by = crate::args::require_name("retracted_by", retracted_by);
    Spi::connect_mut(|client| retract(client, &id, &reason, &by))
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.retract(memory_id text, reason text, retracted_by text)
RETURNS memory_fabric.promoted_memory
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._retract(retract.memory_id, retract.reason, retract.retracted_by);
    v_row memory_fabric.promoted_memory;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.promoted_memory AS m WHERE m.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.retract IS
    'Retract a memory (never deleted); its duplicates go back to the human queue';
REVOKE ALL ON FUNCTION memory_fabric.retract(text, text, text), memory_fabric._retract(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.retract(text, text, text) TO memory_fabric_admin;
"#,
    name = "retract",
    requires = [_retract],
);
