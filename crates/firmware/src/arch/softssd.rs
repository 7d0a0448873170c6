//! SoftSSD: the HIL and FTL coroutines (k workers per queue) on one core, the FIL on a second,
//! the ECC on a third, joined by available / used rings. Nothing moves and nothing is locked.

use serde::{Deserialize, Serialize};
use sim::config::ConfigError;
use sim::{CoreId, Cx};

use crate::arch::Architecture;
use crate::arch::config::exists;
use crate::flow::Flow;
use crate::hil::HilLayout;

/// SoftSSD's cores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Softssd {
    /// Core of the host interface and FTL. Default: 0.
    #[serde(default)]
    pub hil_core: usize,
    /// Core of the FIL. Default: 1.
    #[serde(default = "one")]
    pub fil_core: usize,
    /// Core of the ECC. Default: 2.
    #[serde(default = "two")]
    pub ecc_core: usize,
}

fn one() -> usize {
    1
}
fn two() -> usize {
    2
}

impl Default for Softssd {
    fn default() -> Self {
        Softssd { hil_core: 0, fil_core: 1, ecc_core: 2 }
    }
}

impl Architecture for Softssd {
    fn name(&self, _cores: usize) -> String {
        "softssd".into()
    }

    fn validate(&self, cores: usize) -> Result<(), ConfigError> {
        exists("hil_core", self.hil_core, cores)?;
        exists("fil_core", self.fil_core, cores)?;
        exists("ecc_core", self.ecc_core, cores)
    }

    fn fil_core(&self) -> Option<usize> {
        Some(self.fil_core)
    }

    fn ecc_core(&self) -> usize {
        self.ecc_core
    }

    fn home_core(&self) -> usize {
        self.hil_core
    }

    fn layout(&self, cores: &[CoreId]) -> HilLayout {
        HilLayout::Workers { core: cores[self.hil_core] }
    }

    fn flow(&self, cx: &Cx, _cores: &[CoreId], _logical: u32) -> Flow {
        Flow::plain(cx)
    }
}
