//! A single SSD as a [`System`].

use std::rc::Rc;

use sim::{CoreId, Cx, Frequency, Sim, SimTime};

use crate::config::DeviceConfig;
use crate::device::Device;
use crate::ftl::Ftl;
use crate::hil::Controller;
use crate::power::{Activity, Energy, ResolvedPower};
use crate::system::{Front, Sample, Sampler, System, Totals};

/// Handles on one SSD's counters, kept by a time-series sampler (cheap to clone).
#[derive(Clone)]
pub struct DeviceProbe {
    cx: Cx,
    ftl: Ftl,
    controller: Rc<Controller>,
    cores: Vec<(CoreId, Frequency)>,
    power: Rc<ResolvedPower>,
    dies: u32,
    dram: sim::ByteSize,
    architecture: String,
}

impl DeviceProbe {
    /// Handles on `dev`'s counters.
    pub fn of(dev: &Device) -> DeviceProbe {
        let p = &dev.platform;
        DeviceProbe {
            cx: p.sim.cx(),
            ftl: dev.ftl.clone(),
            controller: dev.controller.clone(),
            cores: p.cores.iter().zip(&p.config.controller.cores).map(|(id, s)| (*id, s.clock)).collect(),
            power: Rc::new(p.config.power()),
            dies: p.config.geometry.total_dies(),
            dram: p.config.controller.dram,
            architecture: dev.architecture().to_string(),
        }
    }

    /// What the device has done so far, for the power model.
    pub fn activity(&self) -> Activity {
        let fil = self.ftl.fil().stats();
        let stats = self.cx.core_stats();
        let (to_device, to_host) = self.controller.link().bytes();
        Activity {
            elapsed: self.cx.now().saturating_since(SimTime::ZERO),
            reads: fil.read.count,
            programs: fil.program.count,
            erases: fil.erase.count,
            channel_bytes: fil.read.bytes + fil.program.bytes,
            dies: self.dies,
            cores: self.cores.iter().map(|(id, clock)| (*clock, stats[id.index()].busy)).collect(),
            dram: self.dram,
            link_bytes: to_device + to_host,
            link_lanes: self.controller.link().lanes(),
        }
    }

    /// Energy used so far, by component.
    pub fn energy(&self) -> Energy {
        self.activity().energy(&self.power)
    }

    /// The counters now.
    pub fn sample(&self) -> Sample {
        let st = self.ftl.stats();
        Sample {
            host_units: st.host_units_written,
            flash_units: st.units_programmed.iter().sum(),
            free_blocks: self.ftl.free_blocks(),
            gc_units_moved: st.gc_units_moved,
            erases: st.blocks_erased,
            energy: self.energy(),
            ..Sample::default()
        }
    }

    /// Everything the report needs.
    pub fn totals(&self) -> Totals {
        let fil = self.ftl.fil();
        let array = fil.array().borrow();
        Totals {
            ftl: self.ftl.stats(),
            fil: fil.stats().clone(),
            erase_counts: array.blocks().iter().filter(|b| !b.bad).map(|b| b.erase_count).collect(),
            cache: self.ftl.cache_hits(),
            cmt: self.ftl.cmt_hits(),
            dirty_units: self.ftl.dirty_lines(),
            free_blocks: self.ftl.free_blocks(),
            link: self.controller.link().bytes(),
            smart: self.controller.smart_log(),
            energy: self.energy(),
            host: None,
            architecture: self.architecture.clone(),
            flow: self.ftl.flow_stats(),
        }
    }
}

impl Device {
    /// Energy used so far, by component.
    pub fn energy(&self) -> Energy {
        DeviceProbe::of(self).energy()
    }
}

impl System for Device {
    fn sim(&self) -> &Sim {
        &self.platform.sim
    }

    fn config(&self) -> &DeviceConfig {
        &self.platform.config
    }

    fn front(&self) -> Front {
        Front::Nvme(self.controller.clone())
    }

    fn queues(&self) -> u32 {
        self.platform.config.host.queues
    }

    fn sampler(&self) -> Sampler {
        let probe = DeviceProbe::of(self);
        Rc::new(move || probe.sample())
    }

    fn totals(&self) -> Totals {
        DeviceProbe::of(self).totals()
    }

    fn checkpoint(&self) -> Result<(), String> {
        Device::checkpoint(self)
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.ftl.check_invariants()
    }
}
