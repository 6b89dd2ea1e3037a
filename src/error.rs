//! Reports core errors as PostgreSQL errors with the SQLSTATEs README.md lists (SQLSTATEs).

use memory_fabric_core::{Error, Kind};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

pub fn raise(e: Error) -> ! {
    let code = match e.kind {
        Kind::InvalidParameter => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        Kind::LimitExceeded => PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
        Kind::NotFound => PgSqlErrorCode::ERRCODE_NO_DATA_FOUND,
        Kind::WrongState => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        Kind::Privilege => PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
        Kind::ReadOnly => PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
        Kind::ActiveTransaction => PgSqlErrorCode::ERRCODE_ACTIVE_SQL_TRANSACTION,
        Kind::UndefinedFile => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
        Kind::FileDamaged => PgSqlErrorCode::ERRCODE_IO_ERROR,
    };
    let mut report = ErrorReport::new(code, e.message, "memory_fabric");
    if let Some(d) = e.detail {
        report = report.set_detail(d);
    }
    if let Some(h) = e.hint {
        report = report.set_hint(h);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

/// Unwraps a core result or raises its error.
pub trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T> OrRaise<T> for memory_fabric_core::Result<T> {
    fn or_raise(self) -> T {
        self.unwrap_or_else(|e| raise(e))
    }
}
