//! The one error shape for bad configuration across ssdlab: the dotted path of the field and
//! what is wrong with it, printed on one line (`geometry.channels: must be at least 1`).

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Dotted path of the offending field, e.g. `geometry.page_size`.
    pub field: String,
    /// What is wrong, in a sentence fragment.
    pub message: String,
}

impl ConfigError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { field: field.into(), message: message.into() }
    }

    /// The same error with `prefix.` in front of the field path.
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = format!("{prefix}.{}", self.field);
        self
    }
}

/// Fails with a [`ConfigError`] for `field` unless `ok`.
pub fn ensure(ok: bool, field: &str, message: impl FnOnce() -> String) -> Result<(), ConfigError> {
    if ok { Ok(()) } else { Err(ConfigError::new(field, message())) }
}
