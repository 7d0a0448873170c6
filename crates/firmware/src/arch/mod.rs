//! Firmware architectures: how the HIL, FTL, FIL and ECC are laid out on the controller's
//! cores. Each architecture builds a [`Device`](crate::device::Device) from the same layers.

mod softssd;

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};

pub(crate) use softssd::build as build_softssd;

/// Which architecture, on which cores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ArchitectureConfig {
    /// SoftSSD: HIL and FTL coroutines (k workers per queue) on one core, the FIL on a second,
    /// the ECC on a third, joined by available / used rings.
    Softssd {
        /// Core of the host interface and FTL. Default: 0.
        #[serde(default)]
        hil_core: usize,
        /// Core of the FIL. Default: 1.
        #[serde(default = "one")]
        fil_core: usize,
        /// Core of the ECC. Default: 2.
        #[serde(default = "two")]
        ecc_core: usize,
    },
}

fn one() -> usize {
    1
}
fn two() -> usize {
    2
}

impl Default for ArchitectureConfig {
    fn default() -> Self {
        ArchitectureConfig::Softssd { hil_core: 0, fil_core: 1, ecc_core: 2 }
    }
}

impl ArchitectureConfig {
    /// The core the FIL runs on.
    pub fn fil_core(&self) -> usize {
        match self {
            ArchitectureConfig::Softssd { fil_core, .. } => *fil_core,
        }
    }

    /// Checks that every role names an existing core.
    pub fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        let ArchitectureConfig::Softssd { hil_core, fil_core, ecc_core } = self;
        for (name, c) in [("hil_core", hil_core), ("fil_core", fil_core), ("ecc_core", ecc_core)] {
            ensure(*c < cores, name, || format!("core {c} does not exist ({cores} cores configured)"))?;
        }
        Ok(())
    }
}
