//! Checks of the arguments every public function shares: tenant ids, display names and free
//! text. Capture's own fields are checked against the tenant's policy (capture.rs); these have
//! fixed bounds, since they are checked before the tenant (and so its policy) is known.

use crate::{Error, Result};

/// Longest tenant id, in bytes.
pub const TENANT_ID_MAX: usize = 256;
/// Longest display name (approver, editor, retracted_by, actor of a decision), in bytes.
pub const NAME_MAX: usize = 256;
/// Longest free text kept with a decision (reasons, notes), in bytes.
pub const NOTE_MAX: usize = 4096;

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

/// A required display name or reason: not null, not blank, at most `max` bytes.
pub fn required_text<'a>(name: &str, v: Option<&'a str>, max: usize) -> Result<&'a str> {
    match v {
        Some(s) if !s.trim().is_empty() => {
            bounded(name, Some(s), max)?;
            Ok(s)
        }
        _ => Err(Error::invalid(format!("{name} must not be null or empty"))),
    }
}

/// An optional free-text argument: at most `max` bytes (54000 beyond).
pub fn bounded(name: &str, v: Option<&str>, max: usize) -> Result<()> {
    match v {
        Some(s) if s.len() > max => Err(Error::limit(format!("{name} is too long"))
            .detail(format!("It has {} bytes; at most {max} are allowed.", s.len()))),
        _ => Ok(()),
    }
}

/// A display name: required, bounded, and with no whitespace at either end, so that
/// "op:alice " is not a second spelling of "op:alice".
pub fn display_name<'a>(name: &str, v: Option<&'a str>) -> Result<&'a str> {
    let s = required_text(name, v, NAME_MAX)?;
    if s.chars().any(char::is_control) {
        return Err(Error::invalid(format!("{name} must not contain control characters")));
    }
    if s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace) {
        return Err(Error::invalid(format!("{name} must not begin or end with whitespace"))
            .detail(format!("\"{}\" was given.", s.escape_debug())));
    }
    Ok(s)
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
    fn free_text_is_bounded() {
        assert!(bounded("notes", None, 4).is_ok());
        assert!(bounded("notes", Some("abcd"), 4).is_ok());
        assert_eq!(bounded("notes", Some("abcde"), 4).unwrap_err().kind, Kind::LimitExceeded);
        // bytes, not characters
        assert_eq!(bounded("notes", Some("ééé"), 4).unwrap_err().kind, Kind::LimitExceeded);
        assert_eq!(required_text("reason", Some("  "), 10).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(required_text("reason", Some(&"x".repeat(11)), 10).unwrap_err().kind, Kind::LimitExceeded);
    }

    #[test]
    fn display_names_are_trimmed_by_the_caller() {
        assert_eq!(display_name("approver", Some("op:alice")).unwrap(), "op:alice");
        assert_eq!(display_name("approver", Some("op:alice ")).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(display_name("approver", Some("\u{a0}op:alice")).unwrap_err().kind, Kind::InvalidParameter);
        assert_eq!(display_name("approver", Some(&"a".repeat(257))).unwrap_err().kind, Kind::LimitExceeded);
    }
}
