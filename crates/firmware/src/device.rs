//! A whole simulated SSD: the platform (simulation, cores, FIL over the array), the FTL and the
//! host interface, laid out by the configured architecture.

use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use nand::FlashArray;
use nand::store::{ImageError, ImageStore};

use crate::arch;
use crate::checkpoint;
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
        Device::build_in(&Rc::new(sim::Sim::new(seed)), cfg, store)
    }

    /// [`build`](Self::build) in an existing simulation (several devices in one, as behind a
    /// bridge): its cores and tasks join `sim`.
    pub fn build_in(
        sim: &Rc<sim::Sim>,
        cfg: &DeviceConfig,
        store: &StoreChoice,
    ) -> Result<Device, ImageError> {
        let p = Platform::build_in(sim, cfg, store)?;
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
        Device::mount_in(&Rc::new(sim::Sim::new(seed)), cfg, array, how)
    }

    /// [`mount`](Self::mount) in an existing simulation.
    pub fn mount_in(
        sim: &Rc<sim::Sim>,
        cfg: &DeviceConfig,
        array: FlashArray,
        how: Mount<'_>,
    ) -> Result<(Device, MountReport), String> {
        let p = Platform::over_in(sim, cfg, array);
        let (dev, report) = Device::on(p, Some(how))?;
        Ok((dev, report.expect("mounted")))
    }

    /// Opens the NAND image at `path` for `cfg`, creating it if it does not exist. A reopened
    /// image mounts clean from its shutdown checkpoint if it has one that describes it, and
    /// otherwise recovers from the OOB as after a crash; the report says which and how long it
    /// took (wall clock).
    pub fn open_image(cfg: &DeviceConfig, path: &Path, seed: u64) -> Result<(Device, Opened), ImageError> {
        Device::open_image_in(&Rc::new(sim::Sim::new(seed)), cfg, path)
    }

    /// [`open_image`](Self::open_image) in an existing simulation.
    pub fn open_image_in(
        sim: &Rc<sim::Sim>,
        cfg: &DeviceConfig,
        path: &Path,
    ) -> Result<(Device, Opened), ImageError> {
        let started = Instant::now();
        if !path.exists() {
            let dev =
                Device::build_in(sim, cfg, &StoreChoice::Image { path: path.to_path_buf(), create: true })?;
            return Ok((
                dev,
                Opened { how: OpenedAs::Created, mount: MountReport::default(), wall: started.elapsed() },
            ));
        }
        let invalid = |why: String| ImageError::Invalid { path: path.to_path_buf(), why };
        let mut array = ImageStore::open(path, &cfg.geometry)?.into_array(cfg.geometry.clone());
        let found = checkpoint::take(&mut array).map_err(invalid)?;
        let (how, hints) = match found {
            checkpoint::Found::Clean(hints) => (OpenedAs::Clean, Some(hints)),
            checkpoint::Found::None => (OpenedAs::Recovered { why: "no shutdown checkpoint".into() }, None),
            checkpoint::Found::Stale(why) => (OpenedAs::Recovered { why }, None),
        };
        let mount = match &hints {
            Some(h) => Mount::Clean(h),
            None => Mount::Recover,
        };
        let (dev, report) = Device::mount_in(sim, cfg, array, mount).map_err(invalid)?;
        Ok((dev, Opened { how, mount: report, wall: started.elapsed() }))
    }

    /// Shuts the device down cleanly: brings it to rest and checkpoints its state into the
    /// NAND image, so that the next [`open_image`](Self::open_image) mounts it exactly.
    pub fn checkpoint(&self) -> Result<(), String> {
        self.quiesce()?;
        let hints = self.ftl.block_hints();
        checkpoint::save(&mut self.platform.fil.array().borrow_mut(), &hints)
    }

    /// Lets the background work in flight (write-backs, GC, translation-page rewrites) finish,
    /// as a device left idle would, for at most `limit` of simulated time. A run ends with the
    /// host's last completion and leaves that work suspended where it is; checking invariants
    /// or comparing states wants it done. In DFTL GC steady state the work need not end by
    /// itself, hence the limit.
    pub fn settle(&self, limit: sim::SimDuration) -> Result<(), String> {
        let sim = &self.platform.sim;
        match sim.run_until(sim.now() + limit) {
            Ok(sim::Stop::TimeLimit) => Err(format!("background work still running after {limit:?}")),
            Ok(_) => Ok(()),
            Err(d) => Err(format!("the device did not come to rest: {d}")),
        }
    }

    /// Brings the device to rest so that its state can be saved: writes every dirty cached
    /// unit to flash (simulated, as a Flush would), lets background work finish (GC to its
    /// threshold; translation pages GC left behind are not rewritten in simulated time), then
    /// writes the mapping out (untimed). Host queues stay as they are.
    pub fn quiesce(&self) -> Result<(), String> {
        let ftl = self.ftl.clone();
        self.ftl.set_quiescing(true);
        self.platform.sim.cx().spawn(self.ftl.core(), "quiesce: flush", async move { ftl.flush().await });
        let rest = self.platform.sim.run().map_err(|d| format!("the device did not come to rest: {d}"));
        self.ftl.set_quiescing(false);
        rest?;
        self.ftl.write_translation_pages_now().map_err(|e| format!("writing the mapping out: {e}"))?;
        Ok(())
    }

    fn on(p: Platform, mount: Option<Mount<'_>>) -> Result<(Device, Option<MountReport>), String> {
        arch::build(p, mount)
    }
}

/// How [`Device::open_image`] found the image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenedAs {
    /// There was none: a new, erased image was created.
    Created,
    /// Mounted from its clean-shutdown checkpoint.
    Clean,
    /// Recovered from the OOB records (after a crash, or with an unusable checkpoint).
    Recovered {
        /// Why there was no clean mount.
        why: String,
    },
}

/// What [`Device::open_image`] did.
#[derive(Clone, Debug)]
pub struct Opened {
    /// Created, mounted clean or recovered.
    pub how: OpenedAs,
    /// What the mount found.
    pub mount: MountReport,
    /// Wall-clock time to open, scan and mount.
    pub wall: Duration,
}
