//! New row ids (memory_fabric_core::ids makes them from a time and random bits).

use memory_fabric_core::ids;
use pgrx::prelude::*;

/// A new id with the given prefix: the current UTC second and 64 random bits.
pub fn new_id(prefix: &str) -> String {
    let mut rnd = [0u8; 8];
    getrandom::getrandom(&mut rnd).unwrap_or_else(|e| error!("memory_fabric: no randomness: {e}"));
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    ids::make_id(prefix, secs, rnd)
}

/// `n` random bytes from the operating system (1 to 1024): the key of the erasure digest is made
/// with it at install (sql/finalize.sql).
#[pg_extern(volatile, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _random_bytes(n: i32) -> Vec<u8> {
    if !(1..=1024).contains(&n) {
        error!("memory_fabric: between 1 and 1024 random bytes can be asked for, not {n}");
    }
    let mut out = vec![0u8; n as usize];
    getrandom::getrandom(&mut out).unwrap_or_else(|e| error!("memory_fabric: no randomness: {e}"));
    out
}

extension_sql!(
    "REVOKE ALL ON FUNCTION memory_fabric._random_bytes(integer) FROM PUBLIC;\n",
    name = "random_bytes_privileges",
    requires = [_random_bytes],
);
