//! The Postgres-free core of memory_fabric: validation, redaction, the built-in embedder,
//! hashing and ids. Unit-tested in microseconds with `cargo test -p memory_fabric_core`.

pub mod args;
pub mod assertion;
pub mod audit;
pub mod calibrate;
pub mod claim;
pub mod capture;
pub mod embed;
pub mod error;
pub mod ids;
pub mod interrupt;
pub mod keys;
pub mod lexicon;
pub mod minilm;
pub mod policy;
pub mod redact;
pub mod review;
pub mod spelling;
pub mod sq8;
pub mod text;

pub use error::{Error, Kind, Result};
