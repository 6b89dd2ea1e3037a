//! The keys the extension serialises and versions on: a lock key for each thing a pipeline step
//! must have to itself (a candidate, a memory, a scope, a subject, a consent, a tenant's policy),
//! and the key of a scope's row in memory_fabric.scope_versions.
//!
//! A key is the SHA-256 of its kind and its parts, each length-prefixed, so that no two different
//! lists of parts give the same bytes: tenant `acme` with user `eu:bob` and tenant `acme:eu` with
//! user `bob` are two scopes, whatever characters the ids hold. Truncated to 64 bits (a lock) or
//! 128 bits (a scope's version), a key is shared by two of them only by a collision of SHA-256,
//! which no one can bring about on purpose, unlike a collision of PostgreSQL's hashtextextended.

use sha2::{Digest, Sha256};

/// Feeds parts to a hash, each length-prefixed (None: a zero byte, told apart from the empty
/// string, which is a one byte and a zero length).
pub fn hash_parts(h: &mut Sha256, parts: &[Option<&str>]) {
    for part in parts {
        match part {
            None => h.update([0u8]),
            Some(s) => {
                h.update([1u8]);
                h.update((s.len() as u64).to_le_bytes());
                h.update(s.as_bytes());
            }
        }
    }
}

/// The SHA-256 of a kind and its parts (hash_parts).
pub fn digest(kind: &str, parts: &[Option<&str>]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((kind.len() as u64).to_le_bytes());
    h.update(kind.as_bytes());
    hash_parts(&mut h, parts);
    h.finalize().into()
}

/// A lock key (memory_fabric.locks.key): the first 64 bits of the digest.
pub fn lock_key(kind: &str, parts: &[Option<&str>]) -> i64 {
    let d = digest(kind, parts);
    i64::from_be_bytes(d[..8].try_into().expect("a digest has 32 bytes"))
}

/// The key of a scope's row in memory_fabric.scope_versions: a tenant and a user (None for the
/// tenant's user-less memories), 128 bits of the digest.
pub fn version_key(tenant: &str, user: Option<&str>) -> [u8; 16] {
    let d = digest("scope_version", &[Some(tenant), user]);
    d[..16].try_into().expect("a digest has 32 bytes")
}

/// HMAC-SHA-256 (RFC 2104) of `msg` under `key`.
pub fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.map(|x| x ^ b);
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(msg).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().into()
}

/// The digest erasure keeps of erased content in place of its content hash: HMAC-SHA-256 of the
/// hash under the database's secret key, in hex (the 64 characters a content hash has). Without
/// the key no one can tell which text it was made from, by guessing or otherwise.
pub fn erased_digest(secret: &[u8], content_hash: &str) -> String {
    hmac_sha256(secret, content_hash.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_never_confused() {
        // the separator inside an id, the empty string against none, the kind against a part
        assert_ne!(lock_key("scope", &[Some("acme"), Some("eu:bob")]), lock_key("scope", &[Some("acme:eu"), Some("bob")]));
        assert_ne!(lock_key("subject", &[Some("acme"), Some("eu:bob")]), lock_key("subject", &[Some("acme:eu"), Some("bob")]));
        assert_ne!(lock_key("scope", &[Some("acme"), Some("")]), lock_key("scope", &[Some("acme"), None]));
        assert_ne!(lock_key("scope", &[Some("a"), Some("b")]), lock_key("scopea", &[Some("b")]));
        assert_ne!(lock_key("candidate", &[Some("mc_1")]), lock_key("memory", &[Some("mc_1")]));
        assert_ne!(version_key("acme", Some("eu:bob")), version_key("acme:eu", Some("bob")));
        assert_ne!(version_key("acme", None), version_key("acme", Some("")));
        // the same parts, the same key
        assert_eq!(lock_key("scope", &[Some("acme"), None]), lock_key("scope", &[Some("acme"), None]));
    }

    #[test]
    fn digests_are_stable() {
        // computed independently, in Python:
        //   import hashlib, struct
        //   p = lambda s: b"\x01" + struct.pack("<Q", len(s)) + s
        //   hashlib.sha256(struct.pack("<Q", 5) + b"scope" + p(b"acme") + b"\x00").hexdigest()
        let d = digest("scope", &[Some("acme"), None]);
        let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, EXPECTED_SCOPE_ACME_NONE);
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        // test cases 1, 2 and 6 (a key longer than the block)
        assert_eq!(hex(hmac_sha256(&[0x0b; 20], b"Hi There")), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        assert_eq!(hex(hmac_sha256(b"Jefe", b"what do ya want for nothing?")), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        assert_eq!(
            hex(hmac_sha256(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
        let d = erased_digest(&[7; 32], "ab");
        assert_eq!(d.len(), 64);
        assert!(d.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(d, erased_digest(&[8; 32], "ab"));
    }

    const EXPECTED_SCOPE_ACME_NONE: &str = "8a98aeeaa0f08d619b442644b848f1a92c8bf702900d8ed9afe592ee22a89100";
}
