//! Faults of the machinery, with stable codes. A program's own failure is never one of these:
//! it is an outcome carried in the run's `error` text.

use std::fmt;

/// A machinery fault. The code string is part of the public contract and never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// The wait queue is full; the run was not accepted.
    QueueFull,
    /// The executor was disposed before the run could start (or the call came after `dispose()`).
    Disposed,
    /// The worker running this job died (a panic), or in `'process'` isolation its engine process
    /// died or was killed; the supervisor replaced it.
    WorkerLost,
    /// The request or the options were malformed.
    InvalidArgument,
    /// A retained execution handle was used after it was disposed, expired, or its isolate was
    /// ended by a bound (or its engine process died).
    HandleClosed,
    /// The durable runtime's store could not be read or written (the database's own error, the
    /// file system, or a store written by a newer version).
    Store,
    /// The durable runtime's PostgreSQL database could not be reached or did not answer in
    /// time; nothing of the operation was written (unless the connection broke during the
    /// commit itself, which a lease and the in-doubt state cover as they cover a crash). Worth
    /// retrying later.
    StoreUnavailable,
    /// The durable runtime's `rollback()` did not revert everything that is or may be in force
    /// (a revert failed, a call in doubt has no revert or no connector here), or a pass holds
    /// the run; raised by `lib/runtime`, listed here so that the codes stay one list.
    RollbackIncomplete,
    /// A pass of a durable run would import a different version of an allowed package than the
    /// run recorded when its program began (or the package is no longer installed); raised by
    /// `lib/runtime`, listed here so that the codes stay one list.
    PackageVersion,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::QueueFull,
        ErrorCode::Disposed,
        ErrorCode::WorkerLost,
        ErrorCode::InvalidArgument,
        ErrorCode::HandleClosed,
        ErrorCode::Store,
        ErrorCode::StoreUnavailable,
        ErrorCode::RollbackIncomplete,
        ErrorCode::PackageVersion,
    ];

    /// The code named by its stable string (as it crosses the executor protocol).
    pub fn from_code(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::QueueFull => "ERR_QUEUE_FULL",
            ErrorCode::Disposed => "ERR_DISPOSED",
            ErrorCode::WorkerLost => "ERR_WORKER_LOST",
            ErrorCode::InvalidArgument => "ERR_INVALID_ARGUMENT",
            ErrorCode::HandleClosed => "ERR_HANDLE_CLOSED",
            ErrorCode::Store => "ERR_STORE",
            ErrorCode::StoreUnavailable => "ERR_STORE_UNAVAILABLE",
            ErrorCode::RollbackIncomplete => "ERR_ROLLBACK_INCOMPLETE",
            ErrorCode::PackageVersion => "ERR_PACKAGE_VERSION",
        }
    }
}

/// The stable code string, as napi-rs reads an error's status to set its JS `code`.
impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// A fault with its code and a human message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub code: ErrorCode,
    pub message: String,
}

impl Fault {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Fault {
            code,
            message: message.into(),
        }
    }
    pub fn queue_full(max: usize) -> Self {
        Fault::new(
            ErrorCode::QueueFull,
            format!("The execution queue is full ({max} runs waiting)"),
        )
    }
    pub fn disposed() -> Self {
        Fault::new(ErrorCode::Disposed, "The executor has been disposed")
    }
    pub fn worker_lost(detail: &str) -> Self {
        Fault::new(
            ErrorCode::WorkerLost,
            format!("The worker running this execution was lost ({detail}); it has been replaced"),
        )
    }
    pub fn handle_closed(handle_id: u64) -> Self {
        Fault::new(
            ErrorCode::HandleClosed,
            format!("The execution handle {handle_id} is closed (disposed, expired, or its isolate was ended by a bound)"),
        )
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Fault::new(ErrorCode::InvalidArgument, message)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Fault {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        assert_eq!(ErrorCode::QueueFull.as_str(), "ERR_QUEUE_FULL");
        assert_eq!(ErrorCode::Disposed.as_str(), "ERR_DISPOSED");
        assert_eq!(ErrorCode::WorkerLost.as_str(), "ERR_WORKER_LOST");
        assert_eq!(ErrorCode::InvalidArgument.as_str(), "ERR_INVALID_ARGUMENT");
        assert_eq!(ErrorCode::HandleClosed.as_str(), "ERR_HANDLE_CLOSED");
        assert_eq!(ErrorCode::Store.as_str(), "ERR_STORE");
        assert_eq!(
            ErrorCode::StoreUnavailable.as_str(),
            "ERR_STORE_UNAVAILABLE"
        );
        assert_eq!(
            ErrorCode::RollbackIncomplete.as_str(),
            "ERR_ROLLBACK_INCOMPLETE"
        );
        assert_eq!(ErrorCode::PackageVersion.as_str(), "ERR_PACKAGE_VERSION");
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::from_code("ERR_NOPE"), None);
        assert_eq!(
            Fault::queue_full(3).to_string(),
            "ERR_QUEUE_FULL: The execution queue is full (3 runs waiting)"
        );
    }
}
