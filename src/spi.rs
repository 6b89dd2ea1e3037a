//! SPI helpers: statements prepared once per backend and kept, so the hot paths skip parsing
//! and planning on every call.

use pgrx::pg_sys::{self, BuiltinOid, PgOid};
use pgrx::spi::{OwnedPreparedStatement, SpiClient};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

thread_local! {
    static PLANS: RefCell<HashMap<String, Rc<OwnedPreparedStatement>>> = RefCell::new(HashMap::new());
    static VECTOR_SCHEMA: RefCell<Option<String>> = const { RefCell::new(None) };
}

pub const TEXT: PgOid = PgOid::BuiltIn(BuiltinOid::TEXTOID);
pub const INT4: PgOid = PgOid::BuiltIn(BuiltinOid::INT4OID);
pub const FLOAT8: PgOid = PgOid::BuiltIn(BuiltinOid::FLOAT8OID);
pub const FLOAT4_ARRAY: PgOid = PgOid::BuiltIn(BuiltinOid::FLOAT4ARRAYOID);
pub const TEXT_ARRAY: PgOid = PgOid::BuiltIn(BuiltinOid::TEXTARRAYOID);
pub const BOOL: PgOid = PgOid::BuiltIn(BuiltinOid::BOOLOID);
pub const INT8: PgOid = PgOid::BuiltIn(BuiltinOid::INT8OID);
pub const OID: PgOid = PgOid::BuiltIn(BuiltinOid::OIDOID);
pub const TIMESTAMPTZ: PgOid = PgOid::BuiltIn(BuiltinOid::TIMESTAMPTZOID);
pub const UUID: PgOid = PgOid::BuiltIn(BuiltinOid::UUIDOID);

/// The kept plan for `sql`, prepared on first use in this backend. Every write goes through a
/// mutating plan, so that is where a standby or a read-only transaction is refused (25006),
/// before pgrx would ask for a transaction id.
pub fn plan(client: &SpiClient<'_>, sql: &str, types: &[PgOid], mutating: bool) -> Rc<OwnedPreparedStatement> {
    if mutating {
        require_writable();
    }
    if let Some(p) = PLANS.with(|m| m.borrow().get(sql).cloned()) {
        return p;
    }
    let prepared = if mutating { client.prepare_mut(sql, types) } else { client.prepare(sql, types) };
    let p = Rc::new(prepared.unwrap_or_else(|e| pgrx::error!("memory_fabric: cannot prepare statement: {e}")).keep());
    PLANS.with(|m| {
        let mut m = m.borrow_mut();
        // A few statements name an embedding model or a dimension in their text (an index must
        // match them), so a backend that sees many models would keep a plan for each: past
        // PLANS_MAX the kept plans are dropped and prepared again as they are used.
        if m.len() >= PLANS_MAX {
            m.clear();
        }
        m.insert(sql.to_owned(), p.clone());
    });
    p
}

/// Drops every kept plan: the next use of each statement plans it again. A kept statement's
/// generic plan is made for the tables as they were then; one made while promoted_memory held a
/// few rows scans the whole table, and stays until ANALYZE invalidates it. The bulk path, which
/// may fill a table from empty within one call, plans afresh for every batch.
pub fn forget_plans() {
    PLANS.with(|m| m.borrow_mut().clear());
}

/// Most statements a backend keeps planned (the fixed ones number about 80).
pub const PLANS_MAX: usize = 256;

/// The quoted schema pgvector is installed in, to qualify its type and operators: our SQL must
/// not depend on the caller's search_path. The install script answers (_pgvector_schema), once
/// per backend.
pub fn vector_schema(client: &SpiClient<'_>) -> String {
    if let Some(s) = VECTOR_SCHEMA.with(|v| v.borrow().clone()) {
        return s;
    }
    let s: String = client
        .select(
            "SELECT memory_fabric._pgvector_schema()",
            Some(1),
            &[],
        )
        .and_then(|t| t.first().get_one::<String>())
        .ok()
        .flatten()
        .unwrap_or_else(|| pgrx::error!("memory_fabric: the vector extension is not installed"));
    VECTOR_SCHEMA.with(|v| *v.borrow_mut() = Some(s.clone()));
    s
}

/// A column of a result row, or an internal error naming the query's failure.
pub fn col<T: pgrx::datum::FromDatum + pgrx::datum::IntoDatum>(
    row: &pgrx::spi::SpiHeapTupleData<'_>,
    ordinal: usize,
) -> Option<T> {
    row.get::<T>(ordinal).unwrap_or_else(|e| pgrx::error!("memory_fabric: cannot read column {ordinal}: {e}"))
}

/// On a standby (or in a read-only transaction) fails with 25006 and a clear message, instead of
/// PostgreSQL's internal error from assigning a transaction id during recovery. Called where a
/// write begins: a mutating plan (spi::plan) and a lock, which takes the transaction id.
pub fn require_writable() {
    let (recovery, read_only) = unsafe { (pg_sys::RecoveryInProgress(), pg_sys::XactReadOnly) };
    if recovery || read_only {
        crate::error::raise(
            memory_fabric_core::Error::new(memory_fabric_core::Kind::ReadOnly, "memory_fabric cannot write in a read-only transaction")
                .detail(if recovery { "This server is a standby in recovery." } else { "The transaction is read-only." })
                .hint(if recovery { "Capture, review and promote on the primary; recall works on a standby." } else { "Run it in a read-write transaction." }),
        );
    }
}
