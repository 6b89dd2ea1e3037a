//! The pipeline's logic, one module per stage, called by the operations in `api/`.

pub mod capture;
pub mod maintenance;
pub mod promotion;
pub mod review;
