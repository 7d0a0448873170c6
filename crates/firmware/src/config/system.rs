//! Which kind of system a configuration describes (`[system] kind = ...`).

use serde::{Deserialize, Serialize};
use sim::config::ConfigError;

use crate::config::{BridgeConfig, HostFtlConfig};

/// The kind of storage system. Default: one SSD.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SystemConfig {
    /// One SSD: the firmware (HIL, FTL, FIL) on its controller, as the rest of the
    /// configuration describes it.
    #[default]
    Ssd,
    /// A PCIe-to-SAS/SATA bridge striping over several SSDs, each as the rest of the
    /// configuration describes (BSSD).
    Bridge(BridgeConfig),
    /// A raw flash array (open-channel-like) under an FTL that runs on the host: the rest of
    /// the configuration describes the array; the FTL's policies come from `[ftl]`.
    HostFtl(HostFtlConfig),
}

impl SystemConfig {
    /// Whether this is the default, a single SSD.
    pub fn is_ssd(&self) -> bool {
        matches!(self, SystemConfig::Ssd)
    }

    /// The kind's name (`ssd`, `bridge`, `host-ftl`).
    pub fn kind(&self) -> &'static str {
        match self {
            SystemConfig::Ssd => "ssd",
            SystemConfig::Bridge(_) => "bridge",
            SystemConfig::HostFtl(_) => "host-ftl",
        }
    }

    /// Checks the section against the flash geometry; the error names the first bad field.
    pub fn validate(&self, geo: &nand::Geometry) -> Result<(), ConfigError> {
        let unit = geo.mapping_unit.bytes();
        match self {
            SystemConfig::Ssd => Ok(()),
            SystemConfig::Bridge(b) => b.validate(unit),
            SystemConfig::HostFtl(h) => h.validate(geo.channels, geo.page_bytes() as u64, unit),
        }
    }
}
