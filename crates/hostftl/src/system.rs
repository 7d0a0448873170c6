//! The raw array, the host and the host-side FTL as one [`System`].

use std::path::Path;
use std::rc::Rc;

use firmware::config::{DeviceConfig, HostFtlConfig, SystemConfig};
use firmware::platform::{Platform, StoreChoice};
use firmware::power::Energy;
use firmware::system::{
    DeviceMeter, Front, Handles, HostStack, Sample, Sampler, System, SystemError, Totals,
};
use nand::store::ImageError;
use raw::RawArray;
use sim::CoreId;

use crate::front::HostFtlFront;
use crate::ftl::HostFtl;
use crate::mount::Parts;

/// Why a host-FTL system could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The NAND image could not be created or opened.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// The array's data does not fit the configuration.
    #[error("mounting the host FTL: {0}")]
    Mount(#[source] crate::mount::MountError),
}

/// A raw flash array under a host-side FTL, with the host it runs on.
pub struct HostFtlSystem {
    platform: Platform,
    /// The raw array.
    pub raw: Rc<RawArray>,
    /// The host.
    pub host: Rc<HostStack>,
    /// The FTL.
    pub ftl: HostFtl,
    /// Its block driver.
    pub front: Rc<HostFtlFront>,
}

/// The host-FTL section of `cfg`.
fn section(cfg: &DeviceConfig) -> &HostFtlConfig {
    match &cfg.system {
        SystemConfig::HostFtl(h) => h,
        other => panic!("not a host-FTL configuration: {other:?}"),
    }
}

impl HostFtlSystem {
    /// Builds the system `cfg` (validated, `[system] kind = "host-ftl"`) describes. A reopened
    /// NAND image is mounted as after a crash.
    pub fn build(cfg: &DeviceConfig, store: &StoreChoice, seed: u64) -> Result<HostFtlSystem, BuildError> {
        let platform = Platform::build(cfg, store, seed)?;
        HostFtlSystem::on(platform)
    }

    /// Opens the NAND image at `path`, creating it if it does not exist; says whether it was
    /// created.
    pub fn open_image(
        cfg: &DeviceConfig,
        path: &Path,
        seed: u64,
    ) -> Result<(HostFtlSystem, bool), BuildError> {
        let create = !path.exists();
        let sys = HostFtlSystem::build(cfg, &StoreChoice::Image { path: path.to_path_buf(), create }, seed)?;
        Ok((sys, create))
    }

    fn on(platform: Platform) -> Result<HostFtlSystem, BuildError> {
        let cfg = platform.config.clone();
        let h = section(&cfg);
        let sim = &platform.sim;
        let irq = cfg.host.link.mmio_latency + cfg.host.host_irq_latency;
        let raw = RawArray::start(sim, &h.array, platform.fil.clone(), &cfg.host.link, irq);
        let host = HostStack::start(sim, &h.host);
        let gc_core = *host.cores().last().expect("a host has a core");
        let parts =
            Parts { raw: raw.clone(), host: host.clone(), cfg: h.clone(), policy: cfg.ftl.clone(), gc_core };
        let ftl = HostFtl::open(&sim.cx(), parts).map_err(BuildError::Mount)?;
        let front = Rc::new(HostFtlFront::new(&sim.cx(), ftl.clone(), host.clone(), &cfg.host));
        Ok(HostFtlSystem { platform, raw, host, ftl, front })
    }

    fn probe(&self) -> Probe {
        let clock = section(&self.platform.config).array.clock;
        Probe {
            ftl: self.ftl.clone(),
            host: self.host.clone(),
            meter: DeviceMeter::of(&self.platform).with_cores(self.raw.cores(), clock),
        }
    }
}

/// Handles on the system's counters for a sampler.
#[derive(Clone)]
struct Probe {
    ftl: HostFtl,
    host: Rc<HostStack>,
    meter: DeviceMeter,
}

impl Probe {
    fn energy(&self) -> Energy {
        let raw = self.ftl.raw();
        self.meter.energy(raw.fil(), raw.link()) + self.host.energy(self.meter.power())
    }

    fn sample(&self) -> Sample {
        let wear = self.ftl.raw().fil().array().borrow().wear();
        Sample::of_ftl(&self.ftl.stats(), self.ftl.free_blocks(), self.energy())
            .with_host(&self.host)
            .with_wear(wear)
    }
}

impl System for HostFtlSystem {
    fn handles(&self) -> Handles<'_> {
        Handles::on(&self.platform, Front::Other(self.front.clone())).with_host(&self.host)
    }

    fn sampler(&self) -> Sampler {
        let p = self.probe();
        Rc::new(move || p.sample())
    }

    fn totals(&self) -> Totals {
        let fil = self.raw.fil();
        let erase_counts = fil.erase_counts();
        // The host FTL retires no blocks (it models no wear-out): its spares stay whole.
        let spare = 100.0;
        Totals {
            ftl: self.ftl.stats(),
            fil: fil.stats().clone(),
            smart: self.front.smart().log(&erase_counts, fil.timing().endurance, spare, false),
            erase_counts,
            cache: self.ftl.hits(),
            cmt: None,
            dirty_units: self.ftl.pending_units(),
            free_blocks: self.ftl.free_blocks(),
            link: self.raw.link().bytes(),
            energy: self.probe().energy(),
            host: Some(self.host.usage()),
            architecture: "host-ftl".into(),
            flow: firmware::flow::FlowStats::default(),
            zones: None,
        }
    }

    fn check_placement(&self, placement: firmware::hil::Placement) -> Result<(), SystemError> {
        self.ftl.check_placement(placement).map_err(SystemError::other)
    }

    fn checkpoint(&self) -> Result<(), SystemError> {
        let ftl = self.ftl.clone();
        self.platform.sim.cx().spawn(CoreId::UNBOUND, "flush for shutdown", async move { ftl.flush().await });
        self.platform.sim.run().map(|_| ()).map_err(SystemError::NotAtRest)
    }

    fn check_invariants(&self) -> Result<(), SystemError> {
        self.ftl.check_invariants().map_err(SystemError::other)
    }
}
