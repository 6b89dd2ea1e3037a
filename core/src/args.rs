//! Checks of the arguments every public function shares: the tenant id, the names people give
//! themselves (approver, editor, retracted_by) and free text (reasons and notes). Capture's own
//! fields are checked against the tenant's policy (capture.rs); these have fixed bounds, since
//! they are checked before the tenant (and so its policy) is known.

use crate::{Error, Result};

/// Whether `c` is invisible: a format character (Unicode category Cf: the zero-width space, joiner
/// and non-joiner, the word joiner, the byte order mark, the bidirectional marks, embeddings,
/// overrides and isolates, soft hyphen, tags) or another default-ignorable code point (variation
/// selectors, the combining grapheme joiner, the Hangul fillers). Two identifiers that print
/// alike would otherwise be different subjects.
pub fn is_invisible(c: char) -> bool {
    use unicode_categories::UnicodeCategories;
    c.is_other_format()
        || matches!(c,
            '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}'
            | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FFA0}' | '\u{E0000}'..='\u{E0FFF}')
}

/// Refuses (22023) an identifier holding an invisible character (is_invisible), naming the first.
pub fn visible(field: &str, v: &str) -> Result<()> {
    match v.chars().enumerate().find(|(_, c)| is_invisible(*c)) {
        None => Ok(()),
        Some((i, c)) => Err(Error::invalid(format!("{field} must not contain invisible or bidirectional control characters"))
            .detail(format!("Character {} is U+{:04X}.", i + 1, c as u32))
            .hint("Identifiers that print alike must be the same identifier: remove the character.")),
    }
}

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
    visible("tenant_id", v)?;
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
    visible(field, v)?;
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
    fn identifiers_refuse_invisible_characters() {
        // zero-width space, joiner and non-joiner, word joiner, byte order mark, soft hyphen,
        // the bidirectional marks, embeddings, overrides and isolates, a variation selector,
        // a tag, the Hangul filler
        for c in ['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}', '\u{200E}', '\u{200F}',
                  '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
                  '\u{2069}', '\u{061C}', '\u{FE0F}', '\u{E0041}', '\u{3164}']
        {
            let v = format!("cus{c}_42");
            let e = tenant_id(Some(&v)).unwrap_err();
            assert_eq!(e.kind, Kind::InvalidParameter, "{:04X}", c as u32);
            assert_eq!(e.detail.as_deref(), Some(format!("Character 4 is U+{:04X}.", c as u32).as_str()));
            assert_eq!(name("approver", Some(&v)).unwrap_err().kind, Kind::InvalidParameter);
        }
        // what prints is allowed: letters of any script, inner spaces, punctuation, emoji
        for ok in ["cus_42", "kunde:Jürgen", "顧客:42", "tenant A", "op:alice@example.org", "team-🦊"] {
            assert!(tenant_id(Some(ok)).is_ok(), "{ok}");
            assert!(visible("user_id", ok).is_ok(), "{ok}");
        }
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
