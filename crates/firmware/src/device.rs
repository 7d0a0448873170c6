//! A whole simulated SSD: the platform (simulation, cores, FIL over the array), the FTL and the
//! host interface, laid out by the configured architecture.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use nand::FlashArray;
use nand::store::{ImageError, ImageStore};
use sim::SimDuration;
use sim::config::ConfigError;

use crate::arch::Architecture;
use crate::checkpoint::{self, CheckpointError};
use crate::config::DeviceConfig;
use crate::ecc::Ecc;
use crate::ftl::{Ftl, Mount, MountError, MountReport, Policies, PreconditionError, Setup};
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
    /// The architecture's name, as reports show it.
    architecture: String,
}

impl Device {
    /// Builds the device `cfg` (validated) describes. An existing NAND image is mounted as
    /// after a crash: the mapping is rebuilt from the pages' OOB.
    pub fn build(cfg: &DeviceConfig, store: &StoreChoice, seed: u64) -> Result<Device, DeviceError> {
        Device::build_in(&Rc::new(sim::Sim::new(seed)), cfg, store)
    }

    /// [`build`](Self::build) in an existing simulation (several devices in one, as behind a
    /// bridge): its cores and tasks join `sim`.
    pub fn build_in(
        sim: &Rc<sim::Sim>,
        cfg: &DeviceConfig,
        store: &StoreChoice,
    ) -> Result<Device, DeviceError> {
        Device::build_with(sim, cfg, store, cfg.architecture.get(), Policies::of(&cfg.ftl, &cfg.geometry))
    }

    /// A builder for the device `cfg` (validated) describes, with parts of the caller's own
    /// (an architecture, FTL policies) in place of those `cfg` names.
    pub fn builder(cfg: &DeviceConfig) -> Builder<'_> {
        Builder { cfg, store: StoreChoice::Metadata, seed: 1, arch: None, policies: None }
    }

    fn build_with(
        sim: &Rc<sim::Sim>,
        cfg: &DeviceConfig,
        store: &StoreChoice,
        arch: &dyn Architecture,
        policies: Policies,
    ) -> Result<Device, DeviceError> {
        let p = Platform::build_in(sim, cfg, store, arch.fil_core())?;
        let mount = match store {
            StoreChoice::Image { create: false, .. } => Some(Mount::Recover),
            _ => None,
        };
        let (dev, _) = Device::on(p, arch, policies, mount).map_err(|e| match store {
            StoreChoice::Image { path, .. } => DeviceError::unusable(path, e),
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
    ) -> Result<(Device, MountReport), MountError> {
        Device::mount_in(&Rc::new(sim::Sim::new(seed)), cfg, array, how)
    }

    /// [`mount`](Self::mount) in an existing simulation.
    pub fn mount_in(
        sim: &Rc<sim::Sim>,
        cfg: &DeviceConfig,
        array: FlashArray,
        how: Mount<'_>,
    ) -> Result<(Device, MountReport), MountError> {
        let p = Platform::over_in(sim, cfg, array, cfg.architecture.fil_core());
        let (dev, report) =
            Device::on(p, cfg.architecture.get(), Policies::of(&cfg.ftl, &cfg.geometry), Some(how))?;
        Ok((dev, report.expect("mounted")))
    }

    /// Opens the NAND image at `path` for `cfg`, creating it if it does not exist. A reopened
    /// image mounts clean from its shutdown checkpoint if it has one that describes it, and
    /// otherwise recovers from the OOB as after a crash; the report says which and how long it
    /// took (wall clock).
    pub fn open_image(cfg: &DeviceConfig, path: &Path, seed: u64) -> Result<(Device, Opened), DeviceError> {
        Device::open_image_in(&Rc::new(sim::Sim::new(seed)), cfg, path)
    }

    /// [`open_image`](Self::open_image) in an existing simulation.
    pub fn open_image_in(
        sim: &Rc<sim::Sim>,
        cfg: &DeviceConfig,
        path: &Path,
    ) -> Result<(Device, Opened), DeviceError> {
        let started = Instant::now();
        if !path.exists() {
            let dev =
                Device::build_in(sim, cfg, &StoreChoice::Image { path: path.to_path_buf(), create: true })?;
            return Ok((
                dev,
                Opened { how: OpenedAs::Created, mount: MountReport::default(), wall: started.elapsed() },
            ));
        }
        let mut array = ImageStore::open(path, &cfg.geometry)?.into_array(cfg.geometry.clone());
        let found = checkpoint::take(&mut array).map_err(|e| DeviceError::unusable(path, e))?;
        let (how, hints) = match found {
            checkpoint::Found::Clean(hints) => (OpenedAs::Clean, Some(hints)),
            checkpoint::Found::None => (OpenedAs::Recovered { why: "no shutdown checkpoint".into() }, None),
            checkpoint::Found::Stale(why) => (OpenedAs::Recovered { why }, None),
        };
        let mount = match &hints {
            Some(h) => Mount::Clean(h),
            None => Mount::Recover,
        };
        let (dev, report) =
            Device::mount_in(sim, cfg, array, mount).map_err(|e| DeviceError::unusable(path, e))?;
        Ok((dev, Opened { how, mount: report, wall: started.elapsed() }))
    }

    /// Shuts the device down cleanly: brings it to rest and checkpoints its state into the
    /// NAND image, so that the next [`open_image`](Self::open_image) mounts it exactly.
    pub fn checkpoint(&self) -> Result<(), DeviceError> {
        self.quiesce()?;
        let hints = self.ftl.block_hints();
        Ok(checkpoint::save(&mut self.platform.fil.array().borrow_mut(), &hints)?)
    }

    /// Lets the background work in flight (write-backs, GC, translation-page rewrites) finish,
    /// as a device left idle would, for at most `limit` of simulated time. A run ends with the
    /// host's last completion and leaves that work suspended where it is; checking invariants
    /// or comparing states wants it done. In DFTL GC steady state the work need not end by
    /// itself, hence the limit.
    pub fn settle(&self, limit: sim::SimDuration) -> Result<(), DeviceError> {
        let sim = &self.platform.sim;
        match sim.run_until(sim.now() + limit) {
            Ok(sim::Stop::TimeLimit) => Err(DeviceError::StillBusy(limit)),
            Ok(_) => Ok(()),
            Err(d) => Err(DeviceError::NotAtRest(d)),
        }
    }

    /// Leaves the device powered on with no host I/O for `d` of simulated time: background
    /// work runs (write-backs, GC, data refresh) and the data ages (retention, under the ECC's
    /// error model). Time with nothing to do costs nothing; the refresh scan wakes once per
    /// `ftl.refresh.interval`.
    pub fn idle(&self, d: sim::SimDuration) -> Result<(), DeviceError> {
        let sim = &self.platform.sim;
        sim.run_through(sim.now() + d).map(drop).map_err(DeviceError::NotAtRest)
    }

    /// Brings the device to rest so that its state can be saved: writes every dirty cached
    /// unit to flash (simulated, as a Flush would), lets background work finish (GC to its
    /// threshold; translation pages GC left behind are not rewritten in simulated time), then
    /// writes the mapping out (untimed). Host queues stay as they are.
    pub fn quiesce(&self) -> Result<(), DeviceError> {
        let ftl = self.ftl.clone();
        self.ftl.set_quiescing(true);
        self.platform.sim.cx().spawn(self.ftl.core(), "quiesce: flush", async move { ftl.flush().await });
        let rest = self.platform.sim.run().map_err(DeviceError::NotAtRest);
        self.ftl.set_quiescing(false);
        rest?;
        self.ftl.write_translation_pages_now().map_err(DeviceError::MappingOut)?;
        Ok(())
    }

    /// The architecture's name, as reports show it.
    pub fn architecture(&self) -> &str {
        &self.architecture
    }

    /// Builds the firmware on `p` as `arch` lays it out: the ECC engine, the flow, the FTL
    /// with `policies` (fresh, or mounted over the array's data) and the host interface, in
    /// that order. The flow is built first and handed to the FTL and the HIL.
    fn on(
        p: Platform,
        arch: &dyn Architecture,
        policies: Policies,
        mount: Option<Mount<'_>>,
    ) -> Result<(Device, Option<MountReport>), MountError> {
        let cfg = &p.config;
        let cx = p.sim.cx();
        let ecc = Ecc::start(
            &cx,
            p.cores[arch.ecc_core()],
            &cfg.ecc,
            cfg.geometry.page_bytes(),
            cfg.timing.cell,
            cfg.geometry.total_blocks(),
        );
        let flow = Rc::new(arch.flow(&cx, &p.cores, cfg.ftl.logical_units(&cfg.geometry)));
        // Where background FTL work (GC, write-back jobs, mapping rewrites) is spawned.
        let home = p.cores[arch.home_core()];
        let with =
            Setup { cx: cx.clone(), core: home, fil: p.fil.clone(), ecc, flow: flow.clone(), policies };
        let ftl_cfg = cfg.ftl.resolved(&cfg.geometry, cfg.controller.dram);
        let (ftl, mount) = match mount {
            None => (Ftl::new(with, &ftl_cfg), None),
            Some(how) => {
                let (ftl, report) = Ftl::mount(with, &ftl_cfg, how)?;
                (ftl, Some(report))
            }
        };
        let controller =
            Controller::start(&cx, arch.layout(&p.cores), &cfg.host, ftl.clone(), flow, cfg.ftl.bypass);
        let architecture = arch.name(cfg.controller.cores.len());
        Ok((Device { platform: p, ftl, controller, architecture }, mount))
    }
}

/// Why a device could not be built, opened, brought to rest or checkpointed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// The NAND image could not be created or opened.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// The image's data or checkpoint does not fit the configuration.
    #[error("{path}: not a usable ssdlab NAND image: {source}")]
    Unusable {
        /// The image.
        path: PathBuf,
        /// What does not fit.
        source: Unusable,
    },
    /// A checkpoint could not be saved.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A caller's architecture does not fit the controller.
    #[error("{name} does not fit the controller: {source}")]
    Architecture {
        /// The architecture's name.
        name: String,
        /// The first bad field.
        source: ConfigError,
    },
    /// Every task waits and nothing can wake one: the firmware is stuck.
    #[error("the device did not come to rest: {0}")]
    NotAtRest(#[source] sim::Deadlock),
    /// Background work was still running when the time allowed ran out.
    #[error("background work still running after {0}")]
    StillBusy(SimDuration),
    /// The mapping could not be written out at rest.
    #[error("writing the mapping out: {0}")]
    MappingOut(#[source] PreconditionError),
}

/// Why an image's data cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unusable {
    /// It does not mount under the configuration.
    #[error(transparent)]
    Mount(#[from] MountError),
    /// Its checkpoint could not be read.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

impl DeviceError {
    fn unusable(path: &Path, e: impl Into<Unusable>) -> DeviceError {
        DeviceError::Unusable { path: path.to_path_buf(), source: e.into() }
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

/// Builds a device with parts of the caller's own (see [`Device::builder`]): research code
/// that is not (yet) a configuration choice, such as a new firmware architecture or a GC
/// victim policy, runs on the same device, host drivers and reports.
pub struct Builder<'a> {
    cfg: &'a DeviceConfig,
    store: StoreChoice,
    seed: u64,
    arch: Option<&'a dyn Architecture>,
    policies: Option<Policies>,
}

impl<'a> Builder<'a> {
    /// Where page data lives. Default: nowhere (metadata only).
    pub fn store(mut self, store: StoreChoice) -> Self {
        self.store = store;
        self
    }

    /// The run's seed. Default: 1.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Lays the firmware out on `arch` instead of the architecture the configuration names
    /// (which is then not used).
    pub fn architecture(mut self, arch: &'a dyn Architecture) -> Self {
        self.arch = Some(arch);
        self
    }

    /// Runs the FTL with `policies` instead of those the configuration names.
    pub fn policies(mut self, policies: Policies) -> Self {
        self.policies = Some(policies);
        self
    }

    /// Builds the device. A caller's architecture is validated first; the error names it.
    pub fn build(self) -> Result<Device, DeviceError> {
        let cfg = self.cfg;
        let arch = self.arch.unwrap_or_else(|| cfg.architecture.get());
        let cores = cfg.controller.cores.len();
        arch.validate(cores)
            .map_err(|source| DeviceError::Architecture { name: arch.name(cores), source })?;
        let policies = self.policies.unwrap_or_else(|| Policies::of(&cfg.ftl, &cfg.geometry));
        Device::build_with(&Rc::new(sim::Sim::new(self.seed)), cfg, &self.store, arch, policies)
    }
}
