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
