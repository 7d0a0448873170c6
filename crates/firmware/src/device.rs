//! A whole simulated SSD: the platform (simulation, cores, FIL over the array), the FTL and the
//! host interface, laid out by the configured architecture.

use std::rc::Rc;

use nand::FlashArray;
use nand::store::ImageError;

use crate::arch::{self, ArchitectureConfig};
use crate::config::DeviceConfig;
use crate::ftl::{Ftl, Mount, MountReport};
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
    /// Builds the device `cfg` (validated) describes. An existing NAND image is mounted as
    /// after a crash: the mapping is rebuilt from the pages' OOB.
    pub fn build(cfg: &DeviceConfig, store: &StoreChoice, seed: u64) -> Result<Device, ImageError> {
        let p = Platform::build(cfg, store, seed)?;
        let mount = match store {
            StoreChoice::Image { create: false, .. } => Some(Mount::Recover),
            _ => None,
        };
        let (dev, _) = Device::on(p, mount).map_err(|why| match store {
            StoreChoice::Image { path, .. } => ImageError::Invalid { path: path.clone(), why },
            _ => unreachable!("a fresh FTL always builds"),
        })?;
        Ok(dev)
    }

    /// Builds the device over an array that already holds data (a snapshot's, or a reopened
    /// image's), mounting the FTL as `how` says. `cfg` must be the configuration the data was
    /// written under; the error says what does not fit.
    pub fn mount(
        cfg: &DeviceConfig,
        array: FlashArray,
        seed: u64,
        how: Mount<'_>,
    ) -> Result<(Device, MountReport), String> {
        let p = Platform::over(cfg, array, seed);
        let (dev, report) = Device::on(p, Some(how))?;
        Ok((dev, report.expect("mounted")))
    }

    /// Brings the device to rest so that its state can be saved: writes every dirty cached
    /// unit to flash (simulated, as a Flush would), lets background work finish, then writes
    /// the mapping out (untimed). Host queues stay as they are.
    pub fn quiesce(&self) -> Result<(), sim::Deadlock> {
        let ftl = self.ftl.clone();
        self.platform.sim.cx().spawn(self.ftl.core(), "quiesce: flush", async move { ftl.flush().await });
        self.platform.sim.run()?;
        self.ftl.write_translation_pages_now();
        Ok(())
    }

    fn on(p: Platform, mount: Option<Mount<'_>>) -> Result<(Device, Option<MountReport>), String> {
        match p.config.architecture {
            ArchitectureConfig::Softssd { hil_core, ecc_core, .. } => {
                arch::build_softssd(p, hil_core, ecc_core, mount)
            }
        }
    }
}
