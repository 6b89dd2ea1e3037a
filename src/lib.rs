//! memory_fabric: governed memory for AI agents, inside PostgreSQL.
//!
//! The SQL surface lives in `api/`, one module per public operation (its SQL declaration, its
//! privileges and the Rust function it calls), over the pipeline's stages in `pipeline/` and the
//! Postgres-free core in the `memory_fabric_core` crate, which makes every decision. The tables,
//! indexes and guards are in sql/schema.sql.

use pgrx::prelude::*;

// Layers, each using only those above it in this list: plumbing, stores, access, embedders,
// the pipeline, then the SQL surface.
mod error;
mod gucs;
mod ids;
mod role;
mod args;
mod spi;
mod xact;
mod inject;
mod scope_scan;

mod consents;
mod events;
mod policy;
mod rows;

mod security;

mod embedder;

mod pipeline;

mod api;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!("../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!("../sql/finalize.sql", name = "finalize", finalize);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    gucs::init();
    // pgrx puts a Rust backtrace into the DETAIL of every error that passed through Rust when
    // the server's environment enables backtraces (RUST_BACKTRACE=1). A client must never see
    // one: RUST_LIB_BACKTRACE, which std::backtrace reads before RUST_BACKTRACE, turns capture
    // off in this process (tests/shell/backtraces.sh).
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
    // The core's long loops (redaction, embedding) honour a cancel or a statement_timeout.
    memory_fabric_core::interrupt::set_hook(check_for_interrupts);
}

fn check_for_interrupts() {
    pgrx::check_for_interrupts!();
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
