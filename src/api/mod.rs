//! The SQL surface, one module per pipeline stage.

pub mod capture;
