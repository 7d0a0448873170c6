//! Front-end configuration.

use serde::{Deserialize, Serialize};

/// Front-end tunables. Every field's doc ends with its default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrontendConfig {
    /// A lease is renewed when less than this remains, in ms. Default: 200.
    pub lease_margin_ms: u64,
    /// How long to wait for a reply from a running back end before failing with EIO, in ms.
    /// Default: 30000.
    pub request_timeout_ms: u64,
    /// How long a call that needs the back end waits for it to come back after it died (is
    /// restarted), in ms; then the call fails with EIO. Reads that need no lease (see
    /// `Client`) do not wait. Default: 60000.
    pub backend_wait_ms: u64,
    /// Largest payload of one log record; larger writes are split, in bytes. Default: 1 MiB
    /// (capped at a quarter of the log data region).
    pub max_record_bytes: u64,
}

impl Default for FrontendConfig {
    fn default() -> Self {
        FrontendConfig {
            lease_margin_ms: 200,
            request_timeout_ms: 30_000,
            backend_wait_ms: 60_000,
            max_record_bytes: 1 << 20,
        }
    }
}

/// A configuration field that fails validation.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid front-end config: `{field}` {reason}")]
pub struct FrontendConfigError {
    /// The field.
    pub field: &'static str,
    /// Why.
    pub reason: &'static str,
}

impl FrontendConfig {
    /// Checks the fields.
    pub fn validate(&self) -> Result<(), FrontendConfigError> {
        if self.max_record_bytes < 4096 {
            return Err(FrontendConfigError { field: "max_record_bytes", reason: "must be at least 4096" });
        }
        if self.request_timeout_ms == 0 {
            return Err(FrontendConfigError { field: "request_timeout_ms", reason: "must be positive" });
        }
        Ok(())
    }
}
