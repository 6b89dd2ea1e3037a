//! memory_fabric: governed memory for AI agents, inside PostgreSQL.
//!
//! The SQL surface lives in `api/` (one module per pipeline stage) over the Postgres-free
//! core in the `memory_fabric_core` crate. Schema DDL is in `sql/`.

use pgrx::prelude::*;

mod api;
mod error;
mod events;
mod gucs;
mod policy;
mod rows;
mod security;
mod spi;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!("../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!("../sql/finalize.sql", name = "finalize", finalize);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    gucs::init();
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    include!("pg_tests.rs");
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
