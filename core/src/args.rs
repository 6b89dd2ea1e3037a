//! Checks of the arguments every public function shares: the tenant id, the names people give
//! themselves (approver, editor, retracted_by) and free text (reasons and notes). Capture's own
//! fields are checked against the tenant's policy (capture.rs); these have fixed bounds, since
//! they are checked before the tenant (and so its policy) is known.

use crate::{Error, Result};

/// Longest tenant id, in bytes.
pub const TENANT_ID_MAX: usize = 256;

/// A tenant id: not null, not empty, at most 256 bytes, no control characters and no whitespace
/// at either end (a NO-BREAK SPACE included), so that one tenant has exactly one spelling: the
/// grant check, row-level security and every stored row compare the same bytes.
pub fn tenant_id(v: Option<&str>) -> Result<&str> {
    let Some(v) = v else {
        return Err(Error::invalid("tenant_id must not be null"));
    };
    if v.is_empty() {
        return Err(Error::invalid("tenant_id must not be empty"));
    }
    if v.len() > TENANT_ID_MAX {
        return Err(Error::limit("tenant_id is too long")
            .detail(format!("It has {} bytes; at most {TENANT_ID_MAX} are allowed.", v.len())));
    }
    if v.chars().any(char::is_control) {
        return Err(Error::invalid("tenant_id must not contain control characters"));
    }
    if v.starts_with(char::is_whitespace) || v.ends_with(char::is_whitespace) {
        return Err(Error::invalid("tenant_id must not begin or end with whitespace")
            .detail(format!("\"{}\" was given.", v.escape_debug())));
    }
    Ok(v)
}

/// Longest display name (approver, editor, retracted_by), in bytes.
pub const NAME_MAX: usize = 256;

/// Longest free text (a reason, a note), in bytes.
pub const NOTE_MAX: usize = 8192;

/// A display name a person gives: not null, not blank, at most 256 bytes, no control characters
/// and no whitespace at either end, so "op:alice " is not a second spelling of "op:alice".
pub fn name<'a>(field: &str, v: Option<&'a str>) -> Result<&'a str> {
    let Some(v) = v.filter(|v| !v.trim().is_empty()) else {
        return Err(Error::invalid(format!("{field} must not be null or empty")));
    };
    if v.len() > NAME_MAX {
        return Err(Error::limit(format!("{field} is too long"))
            .detail(format!("It has {} bytes; at most {NAME_MAX} are allowed.", v.len())));
    }
    if v.chars().any(char::is_control) {
        return Err(Error::invalid(format!("{field} must not contain control characters")));
    }
    if v.starts_with(char::is_whitespace) || v.ends_with(char::is_whitespace) {
        return Err(Error::invalid(format!("{field} must not begin or end with whitespace"))
            .detail(format!("\"{}\" was given.", v.escape_debug())));
    }
    Ok(v)
}

/// Optional free text (notes): at most 8192 bytes.
pub fn note<'a>(field: &str, v: Option<&'a str>) -> Result<Option<&'a str>> {
    match v {
        Some(s) if s.len() > NOTE_MAX => Err(Error::limit(format!("{field} is too long"))
            .detail(format!("It has {} bytes; at most {NOTE_MAX} are allowed.", s.len()))),
        _ => Ok(v),
    }
}

/// Required free text (a reason): not null, not blank, at most 8192 bytes.
pub fn reason<'a>(field: &str, v: Option<&'a str>) -> Result<&'a str> {
    match note(field, v)? {
        Some(s) if !s.trim().is_empty() => Ok(s),
        _ => Err(Error::invalid(format!("{field} must not be null or empty"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;

    #[test]
    fn tenant_ids_have_one_spelling() {
        assert_eq!(tenant_id(Some("tenantA")).unwrap(), "tenantA");
        for bad in ["", " tenantA", "tenantA ", "tenantA\u{a0}", "\u{2003}tenantA", "ten\nant", "tenantA\t"] {
            assert_eq!(tenant_id(Some(bad)).unwrap_err().kind, Kind::InvalidParameter, "{bad:?}");
        }
        assert_eq!(tenant_id(None).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(tenant_id(Some(&"t".repeat(257))).unwrap_err().kind, Kind::LimitExceeded);
        assert!(tenant_id(Some(&"t".repeat(256))).is_ok());
        // inner spaces are a different tenant, not a different spelling
        assert!(tenant_id(Some("tenant A")).is_ok());
    }

    #[test]
    fn names_and_notes_are_bounded() {
        assert_eq!(name("approver", Some("op:alice")).unwrap(), "op:alice");
        for bad in [" op:alice", "op:alice ", "op:alice\u{a0}", "op:\nalice"] {
            assert_eq!(name("approver", Some(bad)).unwrap_err().kind, Kind::InvalidParameter, "{bad:?}");
        }
        assert_eq!(name("approver", None).unwrap_err().message, "approver must not be null or empty");
        assert_eq!(name("approver", Some("  ")).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(name("approver", Some(&"a".repeat(NAME_MAX + 1))).unwrap_err().kind, Kind::LimitExceeded);
        assert!(name("approver", Some(&"a".repeat(NAME_MAX))).is_ok());
        assert_eq!(note("notes", None).unwrap(), None);
        assert_eq!(note("notes", Some(&"n".repeat(NOTE_MAX + 1))).unwrap_err().kind, Kind::LimitExceeded);
        assert_eq!(reason("reason", Some(" ")).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(reason("reason", Some(&"r".repeat(NOTE_MAX + 1))).unwrap_err().kind, Kind::LimitExceeded);
        assert_eq!(reason("reason", Some("  padded is fine  ")).unwrap(), "  padded is fine  ");
    }
}
