//! The bridge-based device as a [`System`]: the SSDs, the bridge in front and the host's thin
//! driver, all in one simulation.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use firmware::config::{BridgeConfig, DeviceConfig, SystemConfig};
use firmware::device::{Device, DeviceError, Opened};
use firmware::hil::SmartLog;
use firmware::platform::StoreChoice;
use firmware::power::{Energy, LinkPower, PowerConfig, ResolvedPower};
use firmware::system::{
    BlockFront, DeviceProbe, Front, Handles, HostStack, Sample, Sampler, System, SystemError, Totals,
    merge_fil, merge_ftl,
};
use sim::{Sim, SimTime};

use crate::front::{Bridge, DRIVE_QUEUE};

/// A bridge over several SSDs, with the host's thin driver.
pub struct BridgeSystem {
    sim: Rc<Sim>,
    config: DeviceConfig,
    /// The SSDs behind the bridge, in stripe order.
    pub drives: Vec<Device>,
    /// The bridge.
    pub bridge: Rc<Bridge>,
    host: Rc<HostStack>,
}

/// The bridge's section of `cfg`, if it describes a bridge.
fn bridge_config(cfg: &DeviceConfig) -> &BridgeConfig {
    match &cfg.system {
        SystemConfig::Bridge(b) => b,
        other => panic!("not a bridge configuration: {other:?}"),
    }
}

/// The configuration of each SSD behind the bridge.
fn drive_config(cfg: &DeviceConfig, k: u32) -> DeviceConfig {
    let mut d =
        DeviceConfig { name: format!("{} drive {k}", cfg.name), system: SystemConfig::Ssd, ..cfg.clone() };
    for c in &mut d.controller.cores {
        c.name = format!("drive {k} {}", c.name);
    }
    d
}

/// The NAND image of drive `k` for the image path `path`: `PATH.k`.
pub fn drive_image(path: &Path, k: u32) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(format!(".{k}"));
    PathBuf::from(p)
}

impl BridgeSystem {
    /// Builds the system `cfg` (validated, `[system] kind = "bridge"`) describes. With a NAND
    /// image, drive `k` keeps its flash in `PATH.k`.
    pub fn build(cfg: &DeviceConfig, store: &StoreChoice, seed: u64) -> Result<BridgeSystem, DeviceError> {
        let sim = Rc::new(Sim::new(seed));
        let b = bridge_config(cfg);
        let drives = (0..b.drives)
            .map(|k| {
                let store = match store {
                    StoreChoice::Image { path, create } => {
                        StoreChoice::Image { path: drive_image(path, k), create: *create }
                    }
                    s => s.clone(),
                };
                Device::build_in(&sim, &drive_config(cfg, k), &store)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(BridgeSystem::assemble(sim, cfg, drives))
    }

    /// Opens (or creates) every drive's NAND image `PATH.k`, each recovered or mounted clean
    /// as [`Device::open_image`] does.
    pub fn open_images(
        cfg: &DeviceConfig,
        path: &Path,
        seed: u64,
    ) -> Result<(BridgeSystem, Vec<Opened>), DeviceError> {
        let sim = Rc::new(Sim::new(seed));
        let mut drives = Vec::new();
        let mut opened = Vec::new();
        for k in 0..bridge_config(cfg).drives {
            let (d, o) = Device::open_image_in(&sim, &drive_config(cfg, k), &drive_image(path, k))?;
            drives.push(d);
            opened.push(o);
        }
        Ok((BridgeSystem::assemble(sim, cfg, drives), opened))
    }

    fn assemble(sim: Rc<Sim>, cfg: &DeviceConfig, drives: Vec<Device>) -> BridgeSystem {
        let b = bridge_config(cfg);
        for d in &drives {
            let ctl = d.controller.clone();
            let created = sim
                .block_on(async move { Front::Nvme(ctl).create_queue(DRIVE_QUEUE).await })
                .expect("creating a queue does not deadlock");
            created.expect("a drive creates its first I/O queue");
        }
        let host = HostStack::start(&sim, &b.host);
        let ctls = drives.iter().map(|d| d.controller.clone()).collect();
        let bridge = Rc::new(Bridge::new(&sim.cx(), b, ctls, host.clone()));
        BridgeSystem { sim, config: cfg.clone(), drives, bridge, host }
    }
}

/// Handles on the bridge's counters for a sampler.
#[derive(Clone)]
struct Probe {
    drives: Vec<DeviceProbe>,
    bridge: Rc<Bridge>,
    host: Rc<HostStack>,
    power_w: f64,
    link: LinkPower,
    lanes: u32,
    host_power: ResolvedPower,
}

impl Probe {
    fn energy(&self) -> Energy {
        let mut e = Energy::default();
        for d in &self.drives {
            e += d.energy();
        }
        let secs = self.bridge.core().cx().now().saturating_since(SimTime::ZERO).as_secs_f64();
        let (to_device, to_host) = self.bridge.link().bytes();
        e.controller += self.power_w * secs;
        e.link += self.link.energy(to_device + to_host, self.lanes, secs);
        e + self.host.energy(&self.host_power)
    }

    fn sample(&self) -> Sample {
        let mut s = Sample::default();
        for d in &self.drives {
            s.add_device(&d.sample());
        }
        Sample { energy: self.energy(), ..s }.with_host(&self.host)
    }
}

impl BridgeSystem {
    fn probe(&self) -> Probe {
        let b = bridge_config(&self.config);
        Probe {
            drives: self.drives.iter().map(DeviceProbe::of).collect(),
            bridge: self.bridge.clone(),
            host: self.host.clone(),
            power_w: b.power_w,
            link: PowerConfig::default().resolve(self.config.timing.cell, false).link,
            lanes: b.link.lanes,
            host_power: self.config.power(),
        }
    }
}

impl System for BridgeSystem {
    fn handles(&self) -> Handles<'_> {
        Handles {
            sim: &self.sim,
            config: &self.config,
            front: Front::Other(self.bridge.clone()),
            queues: bridge_config(&self.config).queues,
            host: Some(&self.host),
        }
    }

    fn sampler(&self) -> Sampler {
        let p = self.probe();
        Rc::new(move || p.sample())
    }

    fn totals(&self) -> Totals {
        let mut parts = self.drives.iter().map(|d| DeviceProbe::of(d).totals());
        let mut t = parts.next().expect("a bridge has at least one drive");
        let mut smart = vec![t.smart.clone()];
        for x in parts {
            merge_ftl(&mut t.ftl, &x.ftl);
            merge_fil(&mut t.fil, &x.fil);
            t.erase_counts.extend(x.erase_counts);
            t.cache = (t.cache.0 + x.cache.0, t.cache.1 + x.cache.1);
            t.cmt = t.cmt.zip(x.cmt).map(|(a, b)| (a.0 + b.0, a.1 + b.1));
            t.dirty_units += x.dirty_units;
            t.free_blocks += x.free_blocks;
            smart.push(x.smart);
        }
        t.smart = merge_smart(&smart);
        t.link = self.bridge.link().bytes();
        t.energy = self.probe().energy();
        t.host = Some(self.host.usage());
        t
    }

    fn checkpoint(&self) -> Result<(), SystemError> {
        for (k, d) in self.drives.iter().enumerate() {
            d.checkpoint().map_err(|e| SystemError::of_drive(k, e))?;
        }
        Ok(())
    }

    fn check_invariants(&self) -> Result<(), SystemError> {
        for (k, d) in self.drives.iter().enumerate() {
            d.ftl.check_invariants().map_err(|e| SystemError::of_drive(k, e))?;
        }
        Ok(())
    }
}

/// The SMART log of drives side by side: counts add, wear is the most worn drive's, spare the
/// least spared drive's.
fn merge_smart(logs: &[SmartLog]) -> SmartLog {
    let mut m = logs[0].clone();
    for l in &logs[1..] {
        m.data_units_read += l.data_units_read;
        m.data_units_written += l.data_units_written;
        m.host_read_commands += l.host_read_commands;
        m.host_write_commands += l.host_write_commands;
        m.media_errors += l.media_errors;
        m.percentage_used = m.percentage_used.max(l.percentage_used);
        m.available_spare = m.available_spare.min(l.available_spare);
        m.critical_warning |= l.critical_warning;
    }
    m
}
