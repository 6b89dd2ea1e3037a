//! Text normalisation shared by the content hash and the built-in embedder.

use crate::interrupt::{self, Every};
use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

/// Long loops over a text's characters check for interrupts once per this many characters.
pub(crate) const CHECK_EVERY_CHARS: usize = 64 * 1024;

/// NFKC, lowercase, whitespace collapsed to single spaces, trimmed. Two texts that differ only
/// in case, spacing or Unicode compatibility forms normalise to the same string.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    let mut every = Every::new(CHECK_EVERY_CHARS);
    for ch in text.nfkc().flat_map(char::to_lowercase) {
        every.tick(1);
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

const HASH_CHUNK: usize = 64 * 1024;

/// The content hash of a (redacted) text: hex SHA-256 of its normalised form.
pub fn content_hash(text: &str) -> String {
    let norm = normalize(text);
    // Hashed in chunks, checking for interrupts between them; the digest is the same.
    let mut hasher = Sha256::new();
    for chunk in norm.as_bytes().chunks(HASH_CHUNK) {
        interrupt::check();
        hasher.update(chunk);
    }
    let digest = hasher.finalize();
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
