//! Text normalisation shared by the content hash and the built-in embedder.

use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

/// NFKC, lowercase, whitespace collapsed to single spaces, trimmed. Two texts that differ only
/// in case, spacing or Unicode compatibility forms normalise to the same string.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for ch in text.nfkc().flat_map(char::to_lowercase) {
        if ch.is_whitespace() {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(ch);
        }
    }
    out
}

/// The content hash of a (redacted) text: hex SHA-256 of its normalised form.
pub fn content_hash(text: &str) -> String {
    let digest = Sha256::digest(normalize(text).as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_case_space_and_compat_forms() {
        assert_eq!(normalize("  Hello\t\tWORLD \n"), "hello world");
        assert_eq!(normalize("ﬁle"), "file"); // ligature, NFKC
        assert_eq!(normalize("Ｆｕｌｌ"), "full"); // full-width
        assert_eq!(normalize(""), "");
        assert_eq!(normalize(" \n "), "");
    }

    #[test]
    fn hash_ignores_case_and_spacing_but_not_words() {
        let a = content_hash("Customer prefers email.");
        assert_eq!(a, content_hash("  customer   PREFERS email."));
        assert_ne!(a, content_hash("Customer prefers phone."));
        assert_eq!(a.len(), 64);
        assert_eq!(
            content_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
