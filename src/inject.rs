//! Injection points: named places in the code where a session can be made to wait, so that an
//! isolation spec (tests/isolation) can force an interleaving that is otherwise only likely: the
//! scope scan between two scopes, review between reading its scope's version and searching.
//!
//! A point waits only in a session whose memory_fabric.injection_points names it, a setting only
//! a superuser can change. It waits for a share lock on the advisory key (CLASS, its number
//! below), the key pg_advisory_lock(77140, number) takes, and releases it at once: a test session
//! that holds that key holds the waiting one there, and isolationtester sees it as blocked.
//! Elsewhere a point costs one read of the setting.

use crate::gucs;
use pgrx::pg_sys;

/// The first half of every point's advisory key.
const CLASS: u32 = 77140;

/// The points, with the second half of their keys.
const POINTS: [(&str, u32); 2] = [("scope-scan-next-scope", 1), ("review-after-scope-version", 2)];

/// Waits at point `name` if this session's memory_fabric.injection_points names it.
pub fn point(name: &str) {
    let Some(list) = gucs::get(&gucs::INJECTION_POINTS) else { return };
    if !list.split(',').any(|p| p.trim() == name) {
        return;
    }
    let Some(&(_, number)) = POINTS.iter().find(|(p, _)| *p == name) else { return };
    // SAFETY: a lock tag built as PostgreSQL's SET_LOCKTAG_INT32 builds pg_advisory_lock(int4,
    // int4)'s; acquired and released within this call, as a transaction lock (released on an
    // error too).
    unsafe {
        let tag = pg_sys::LOCKTAG {
            locktag_field1: pg_sys::MyDatabaseId.to_u32(),
            locktag_field2: CLASS,
            locktag_field3: number,
            locktag_field4: 2,
            locktag_type: pg_sys::LockTagType::LOCKTAG_ADVISORY as u8,
            locktag_lockmethodid: pg_sys::USER_LOCKMETHOD as u8,
        };
        pg_sys::LockAcquire(&tag, pg_sys::ShareLock as pg_sys::LOCKMODE, false, false);
        pg_sys::LockRelease(&tag, pg_sys::ShareLock as pg_sys::LOCKMODE, false);
    }
}
