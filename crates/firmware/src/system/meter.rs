//! The device side's power inputs ([`DeviceMeter`]): what an SSD's controller or a raw array
//! has done, read from its FIL, its cores and its host link into an [`Activity`].

use std::rc::Rc;

use sim::{ByteSize, CoreId, Cx, Frequency, SimTime};

use crate::fil::Fil;
use crate::hil::Link;
use crate::platform::Platform;
use crate::power::{Activity, Energy, ResolvedPower};

/// What the power model needs of a device besides its counters: its cores and their clocks,
/// dies, DRAM and power parameters (cheap to clone).
#[derive(Clone)]
pub struct DeviceMeter {
    cx: Cx,
    cores: Vec<(CoreId, Frequency)>,
    dies: u32,
    dram: ByteSize,
    power: Rc<ResolvedPower>,
}

impl DeviceMeter {
    /// The meter of the device on `p`: its controller cores, the dies and DRAM its
    /// configuration gives, its power parameters.
    pub fn of(p: &Platform) -> DeviceMeter {
        DeviceMeter {
            cx: p.sim.cx(),
            cores: p.cores.iter().zip(&p.config.controller.cores).map(|(id, s)| (*id, s.clock)).collect(),
            dies: p.config.geometry.total_dies(),
            dram: p.config.controller.dram,
            power: Rc::new(p.config.power()),
        }
    }

    /// The meter with `cores` more, clocked at `clock` (a raw array's controllers).
    pub fn with_cores(mut self, cores: impl IntoIterator<Item = CoreId>, clock: Frequency) -> DeviceMeter {
        self.cores.extend(cores.into_iter().map(|c| (c, clock)));
        self
    }

    /// The power parameters.
    pub fn power(&self) -> &ResolvedPower {
        &self.power
    }

    /// What the device has done so far: `fil`'s operations and channel bytes, its cores' busy
    /// time, the bytes over its host `link`.
    pub fn activity(&self, fil: &Fil, link: &Link) -> Activity {
        let ops = fil.stats();
        let stats = self.cx.core_stats();
        let (to_device, to_host) = link.bytes();
        Activity {
            elapsed: self.cx.now().saturating_since(SimTime::ZERO),
            reads: ops.read.count,
            programs: ops.program.count,
            erases: ops.erase.count,
            channel_bytes: ops.read.bytes + ops.program.bytes,
            dies: self.dies,
            cores: self.cores.iter().map(|(id, clock)| (*clock, stats[id.index()].busy)).collect(),
            dram: self.dram,
            link_bytes: to_device + to_host,
            link_lanes: link.lanes(),
        }
    }

    /// The device's energy so far, by component.
    pub fn energy(&self, fil: &Fil, link: &Link) -> Energy {
        self.activity(fil, link).energy(&self.power)
    }
}
