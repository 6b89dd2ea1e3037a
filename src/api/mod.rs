//! The SQL surface, one module per pipeline stage.

pub mod capture;
pub mod governance;
pub mod maintenance;
pub mod promote;
pub mod recall;
pub mod review;
