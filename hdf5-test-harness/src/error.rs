//! One error type for the harness: a message that names what failed (a file, a
//! command, a bootstrap step), optionally chained with its cause.

use std::fmt;

/// An error whose message names the thing that failed.
#[derive(Debug)]
pub struct Error {
    msg: String,
}

impl Error {
    /// Creates an error from a complete, user-facing message.
    pub fn new(msg: impl Into<String>) -> Self {
        Self { msg: msg.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

/// The harness's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Adds "what we were doing" to any displayable error.
pub trait Context<T> {
    /// Prefixes the error with `what()`, e.g. `reading /x/y.json: No such file`.
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::new(format!("{}: {e}", what())))
    }
}
