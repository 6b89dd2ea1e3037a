//! `memory_fabric.edit()`: a reviewer captures an edited candidate that supersedes this one.

use crate::pipeline::promotion::edit;
use pgrx::prelude::*;

#[allow(clippy::too_many_arguments)]
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _edit(
    candidate_id: Option<&str>,
    editor: Option<&str>,
    text: Option<&str>,
    classification: Option<&str>,
    evidence_refs: Option<&str>,
    value: Option<&str>,
    notes: Option<&str>,
) -> String {
    let id = crate::args::require_text("candidate_id", candidate_id);
    let editor = crate::args::require_name("editor", editor);
    let notes = crate::args::require_note("notes", notes);
    let text = text.unwrap_or("");
    Spi::connect_mut(|client| edit(client, &id, &editor, text, classification, evidence_refs, value, notes))
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.edit(candidate_id text, editor text, text text,
                                   classification text DEFAULT NULL, evidence_refs jsonb DEFAULT NULL,
                                   value jsonb DEFAULT NULL, notes text DEFAULT NULL)
RETURNS memory_fabric.reviews
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._edit(edit.candidate_id, edit.editor, edit.text, edit.classification,
                                      edit.evidence_refs::text, edit.value::text, edit.notes);
    v_row memory_fabric.reviews;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.reviews AS r WHERE r.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.edit IS
    'Capture an edited candidate that supersedes this one, and review it';
REVOKE ALL ON FUNCTION memory_fabric.edit(text, text, text, text, jsonb, jsonb, text), memory_fabric._edit FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.edit(text, text, text, text, jsonb, jsonb, text) TO memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "edit",
    requires = [_edit],
);
