//! A whole simulated SSD: the platform (simulation, cores, FIL over the array), the FTL and the
//! host interface, laid out by the configured architecture.

use std::rc::Rc;

use nand::store::ImageError;

use crate::arch::{self, ArchitectureConfig};
use crate::config::DeviceConfig;
use crate::ftl::Ftl;
use crate::hil::Controller;
use crate::platform::{Platform, StoreChoice};

/// A device ready for a host.
pub struct Device {
    /// Simulation, cores, FIL and configuration.
    pub platform: Platform,
    /// The FTL.
    pub ftl: Ftl,
    /// The NVMe controller hosts submit to.
    pub controller: Rc<Controller>,
}

impl Device {
    /// Builds the device `cfg` (validated) describes.
    pub fn build(cfg: &DeviceConfig, store: &StoreChoice, seed: u64) -> Result<Device, ImageError> {
        let p = Platform::build(cfg, store, seed)?;
        Ok(match cfg.architecture {
            ArchitectureConfig::Softssd { hil_core, ecc_core, .. } => {
                arch::build_softssd(p, hil_core, ecc_core)
            }
        })
    }
}
