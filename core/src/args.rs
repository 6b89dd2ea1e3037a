//! Checks of the arguments every public function shares: the tenant id. Capture's own fields
//! are checked against the tenant's policy (capture.rs); this has fixed bounds, since it is
//! checked before the tenant (and so its policy) is known.

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
}
