//! Which kind of system a configuration describes (`[system] kind = ...`).

use serde::{Deserialize, Serialize};
use sim::config::ConfigError;

/// The kind of storage system. Default: one SSD.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SystemConfig {
    /// One SSD: the firmware (HIL, FTL, FIL) on its controller, as the rest of the
    /// configuration describes it.
    #[default]
    Ssd,
}

impl SystemConfig {
    /// Whether this is the default, a single SSD.
    pub fn is_ssd(&self) -> bool {
        matches!(self, SystemConfig::Ssd)
    }

    /// Checks the section; the error names the first bad field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}
