//! Errors of the core, each tied to the SQLSTATE the extension reports (README.md, SQLSTATEs).

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 22023 invalid_parameter_value
    InvalidParameter,
    /// 54000 program_limit_exceeded
    LimitExceeded,
    /// P0002 no_data_found
    NotFound,
    /// 55000 object_not_in_prerequisite_state
    WrongState,
    /// 42501 insufficient_privilege
    Privilege,
    /// 25006 read_only_sql_transaction
    ReadOnly,
    /// 25001 active_sql_transaction: a procedure that commits, called inside a transaction block
    ActiveTransaction,
    /// 58P01 undefined_file: a file the configuration names is not there (the semantic model's)
    UndefinedFile,
    /// 58030 io_error: a file is there but cannot be used (damaged model weights)
    FileDamaged,
}

impl Kind {
    pub fn sqlstate(self) -> &'static str {
        match self {
            Kind::InvalidParameter => "22023",
            Kind::LimitExceeded => "54000",
            Kind::NotFound => "P0002",
            Kind::WrongState => "55000",
            Kind::Privilege => "42501",
            Kind::ReadOnly => "25006",
            Kind::ActiveTransaction => "25001",
            Kind::UndefinedFile => "58P01",
            Kind::FileDamaged => "58030",
        }
    }
}

/// An error in PostgreSQL's message style: a lowercase message without a trailing period,
/// with optional DETAIL and HINT written as sentences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: Kind,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl Error {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), detail: None, hint: None }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Kind::InvalidParameter, message)
    }
    /// 55000: the object is not in the state the operation needs (promoted, rejected, revoked…).
    pub fn wrong_state(message: impl Into<String>) -> Self {
        Self::new(Kind::WrongState, message)
    }
    pub fn limit(message: impl Into<String>) -> Self {
        Self::new(Kind::LimitExceeded, message)
    }
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.sqlstate(), self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
