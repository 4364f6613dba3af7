//! One error type for everything the core can reject, with the file, the field
//! (or operation) and the reason, so front-ends can print one clear line.

use std::fmt;

/// What kind of input was wrong; front-ends map each to a typed exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The platform description is malformed or inconsistent.
    Platform,
    /// The trace is malformed or refers to ranks, requests or ops that do not exist.
    Trace,
    /// Ranks cannot be placed on the hosts (too few cores, unknown host).
    Placement,
    /// The replay cannot finish: blocked ranks or messages left unmatched.
    Deadlock,
    /// Options given to the simulator are invalid (unknown model, ...).
    Options,
    /// A multicast instance (paper 003) is malformed or inconsistent.
    Multicast,
    /// An output could not be written (disk full, permission denied, ...).
    Output,
    /// The caller stopped the run (a progress callback asked to, or raised).
    Aborted,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub kind: ErrorKind,
    /// File the input came from ("<dict>" when it was given in memory).
    pub source: String,
    /// Path of the offending field, e.g. `ranks[2][5].bytes`; empty when not about one field.
    pub field: String,
    pub reason: String,
}

impl Error {
    pub fn new(kind: ErrorKind, field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error { kind, source: String::new(), field: field.into(), reason: reason.into() }
    }
    pub fn platform(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::Platform, field, reason)
    }
    pub fn trace(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::Trace, field, reason)
    }
    /// Attach the file name the input was read from.
    pub fn in_source(mut self, source: &str) -> Self {
        if self.source.is_empty() {
            self.source = source.to_string();
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<&str> = Vec::new();
        if !self.source.is_empty() {
            parts.push(&self.source);
        }
        if !self.field.is_empty() {
            parts.push(&self.field);
        }
        if parts.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", parts.join(": "), self.reason)
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Parse JSON text into `T`, reporting the path of the failing field.
pub fn parse_json<T: serde::de::DeserializeOwned>(kind: ErrorKind, text: &str) -> Result<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let field = if path == "." { String::new() } else { path };
        let reason = if inner.is_syntax() || inner.is_eof() {
            format!("malformed JSON: {inner}")
        } else {
            inner.to_string()
        };
        Error::new(kind, field, reason)
    })
}

/// Check a number is finite and >= 0 (or > 0 when `positive`).
pub fn check_amount(kind: ErrorKind, field: &str, value: f64, positive: bool) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::new(kind, field, format!("must be a finite number, got {value}")));
    }
    if positive && value <= 0.0 {
        return Err(Error::new(kind, field, format!("must be > 0, got {value}")));
    }
    if value < 0.0 {
        return Err(Error::new(kind, field, format!("must be >= 0, got {value}")));
    }
    Ok(())
}
