//! Who did it: the role calling, bound to every row and event the pipeline writes.

use pgrx::pg_sys;

/// The session's current role (SET ROLE counts), read with GetOuterUserId so that the answer is
/// the same inside the SECURITY DEFINER functions that do the work.
pub fn caller() -> pg_sys::Oid {
    // SAFETY: reads the backend's current outer user id; no preconditions.
    unsafe { pg_sys::GetOuterUserId() }
}
