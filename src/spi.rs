//! SPI helpers: statements prepared once per backend and kept, so the hot paths skip parsing
//! and planning on every call.

use pgrx::pg_sys::{BuiltinOid, PgOid};
use pgrx::spi::{OwnedPreparedStatement, SpiClient};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

thread_local! {
    static PLANS: RefCell<HashMap<&'static str, Rc<OwnedPreparedStatement>>> = RefCell::new(HashMap::new());
}

pub const TEXT: PgOid = PgOid::BuiltIn(BuiltinOid::TEXTOID);
pub const INT4: PgOid = PgOid::BuiltIn(BuiltinOid::INT4OID);
pub const FLOAT8: PgOid = PgOid::BuiltIn(BuiltinOid::FLOAT8OID);
pub const FLOAT4_ARRAY: PgOid = PgOid::BuiltIn(BuiltinOid::FLOAT4ARRAYOID);
pub const TEXT_ARRAY: PgOid = PgOid::BuiltIn(BuiltinOid::TEXTARRAYOID);

/// The kept plan for `sql`, prepared on first use in this backend.
pub fn plan(client: &SpiClient<'_>, sql: &'static str, types: &[PgOid], mutating: bool) -> Rc<OwnedPreparedStatement> {
    if let Some(p) = PLANS.with(|m| m.borrow().get(sql).cloned()) {
        return p;
    }
    let prepared = if mutating { client.prepare_mut(sql, types) } else { client.prepare(sql, types) };
    let p = Rc::new(prepared.unwrap_or_else(|e| pgrx::error!("memory_fabric: cannot prepare statement: {e}")).keep());
    PLANS.with(|m| m.borrow_mut().insert(sql, p.clone()));
    p
}
