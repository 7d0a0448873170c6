//! The raw array, the host and the host-side FTL as one [`System`].

use std::path::Path;
use std::rc::Rc;

use firmware::config::{DeviceConfig, HostFtlConfig, SystemConfig};
use firmware::platform::{Platform, StoreChoice};
use firmware::power::{Activity, Energy, ResolvedPower};
use firmware::system::{Front, HostStack, Sample, Sampler, System, Totals};
use nand::store::ImageError;
use raw::RawArray;
use sim::{CoreId, Frequency, Sim, SimTime};

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
    Mount(String),
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
        let front = Rc::new(HostFtlFront::new(
            &sim.cx(),
            ftl.clone(),
            host.clone(),
            cfg.host.queues,
            cfg.host.lba_size.bytes() as u32,
            cfg.host.max_transfer.bytes(),
        ));
        Ok(HostFtlSystem { platform, raw, host, ftl, front })
    }

    fn probe(&self) -> Probe {
        let cfg = &self.platform.config;
        let mut cores: Vec<(CoreId, Frequency)> =
            self.platform.cores.iter().zip(&cfg.controller.cores).map(|(id, s)| (*id, s.clock)).collect();
        cores.extend(self.raw.cores().into_iter().map(|c| (c, section(cfg).array.clock)));
        Probe {
            cx: self.platform.sim.cx(),
            ftl: self.ftl.clone(),
            host: self.host.clone(),
            cores,
            power: Rc::new(cfg.power()),
            dies: cfg.geometry.total_dies(),
            dram: cfg.controller.dram,
            lanes: cfg.host.link.lanes,
        }
    }
}

/// Handles on the system's counters for a sampler.
#[derive(Clone)]
struct Probe {
    cx: sim::Cx,
    ftl: HostFtl,
    host: Rc<HostStack>,
    cores: Vec<(CoreId, Frequency)>,
    power: Rc<ResolvedPower>,
    dies: u32,
    dram: sim::ByteSize,
    lanes: u32,
}

impl Probe {
    fn energy(&self) -> Energy {
        let raw = self.ftl.raw();
        let fil = raw.fil().stats();
        let core_stats = self.cx.core_stats();
        let (to_device, to_host) = raw.link().bytes();
        let device = Activity {
            elapsed: self.cx.now().saturating_since(SimTime::ZERO),
            reads: fil.read.count,
            programs: fil.program.count,
            erases: fil.erase.count,
            channel_bytes: fil.read.bytes + fil.program.bytes,
            dies: self.dies,
            cores: self.cores.iter().map(|(id, clock)| (*clock, core_stats[id.index()].busy)).collect(),
            dram: self.dram,
            link_bytes: to_device + to_host,
            link_lanes: self.lanes,
        };
        device.energy(&self.power) + self.host.activity().energy(&self.power)
    }

    fn sample(&self) -> Sample {
        let st = self.ftl.stats();
        Sample {
            host_units: st.host_units_written,
            flash_units: st.units_programmed.iter().sum(),
            free_blocks: self.ftl.free_blocks(),
            gc_units_moved: st.gc_units_moved,
            erases: st.blocks_erased,
            energy: self.energy(),
            host_memory: self.host.memory(),
            host_busy_ns: self.host.busy().as_nanos(),
            host_cores: self.host.cores().len() as u32,
        }
    }
}

impl System for HostFtlSystem {
    fn sim(&self) -> &Sim {
        &self.platform.sim
    }

    fn config(&self) -> &DeviceConfig {
        &self.platform.config
    }

    fn front(&self) -> Front {
        Front::Other(self.front.clone())
    }

    fn queues(&self) -> u32 {
        self.platform.config.host.queues
    }

    fn host_cores(&self) -> Vec<CoreId> {
        self.host.cores().to_vec()
    }

    fn sampler(&self) -> Sampler {
        let p = self.probe();
        Rc::new(move || p.sample())
    }

    fn totals(&self) -> Totals {
        let fil = self.raw.fil();
        let array = fil.array().borrow();
        let erase_counts: Vec<u32> =
            array.blocks().iter().filter(|b| !b.bad).map(|b| b.erase_count).collect();
        let mean = erase_counts.iter().map(|&e| e as f64).sum::<f64>() / erase_counts.len().max(1) as f64;
        let cfg = &self.platform.config;
        let target = cfg.ftl.gc.soft(cfg.geometry.blocks) as f64
            * (cfg.geometry.total_dies() * cfg.geometry.planes) as f64;
        let spare = self.ftl.free_blocks() as f64 / target.max(1.0) * 100.0;
        Totals {
            ftl: self.ftl.stats(),
            fil: fil.stats().clone(),
            erase_counts,
            cache: self.ftl.hits(),
            cmt: None,
            dirty_units: self.ftl.pending_units(),
            free_blocks: self.ftl.free_blocks(),
            link: self.raw.link().bytes(),
            smart: self.front.smart().log(mean, fil.timing().endurance, spare),
            energy: self.probe().energy(),
            host: Some(self.host.usage()),
            architecture: "host-ftl".into(),
            flow: firmware::flow::FlowStats::default(),
        }
    }

    fn check_placement(&self, placement: firmware::hil::Placement) -> Result<(), String> {
        self.ftl.check_placement(placement).map_err(|e| e.to_string())
    }

    fn checkpoint(&self) -> Result<(), String> {
        let ftl = self.ftl.clone();
        self.platform.sim.cx().spawn(CoreId::UNBOUND, "flush for shutdown", async move { ftl.flush().await });
        self.platform.sim.run().map(|_| ()).map_err(|d| format!("the array did not come to rest: {d}"))
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.ftl.check_invariants()
    }
}
