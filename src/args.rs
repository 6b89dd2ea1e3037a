//! Checks of the public functions' arguments, raised as SQLSTATEs (memory_fabric_core::args
//! decides; this module raises).

use crate::error::raise;

/// Checks a tenant id argument (22023 / 54000, see memory_fabric_core::args::tenant_id).
pub fn require_tenant_id(v: Option<&str>) -> String {
    memory_fabric_core::args::tenant_id(v).unwrap_or_else(|e| raise(e)).to_owned()
}

/// Checks a display name argument: approver, editor, retracted_by (22023 / 54000, see
/// memory_fabric_core::args::name).
pub fn require_name(field: &str, v: Option<&str>) -> String {
    memory_fabric_core::args::name(field, v).unwrap_or_else(|e| raise(e)).to_owned()
}

/// Checks a required free-text argument, a reason (22023 / 54000).
pub fn require_reason(field: &str, v: Option<&str>) -> String {
    memory_fabric_core::args::reason(field, v).unwrap_or_else(|e| raise(e)).to_owned()
}

/// Checks an optional free-text argument, a note (54000 when too long).
pub fn require_note<'a>(field: &str, v: Option<&'a str>) -> Option<&'a str> {
    memory_fabric_core::args::note(field, v).unwrap_or_else(|e| raise(e))
}

/// Checks a required, non-blank text argument, an id or a key (22023; 54000 past 8192 bytes).
pub fn require_text(name: &str, v: Option<&str>) -> String {
    require_reason(name, v)
}

/// Checks a required identifier that is not a display name (a subject, a model): not blank, at
/// most 8192 bytes, and no invisible or bidirectional control characters (22023 / 54000, see
/// memory_fabric_core::args::visible).
pub fn require_identifier(name: &str, v: Option<&str>) -> String {
    let v = require_text(name, v);
    memory_fabric_core::args::visible(name, &v).unwrap_or_else(|e| raise(e));
    v
}
