//! Cumulative activity counters and the energy they imply.

use sim::{ByteSize, Frequency, SimDuration};

use crate::power::config::ResolvedPower;
use crate::power::energy::Energy;

/// What a device has done since the simulation started.
#[derive(Clone, Debug, Default)]
pub struct Activity {
    /// Simulated time so far.
    pub elapsed: SimDuration,
    /// Page reads (per plane).
    pub reads: u64,
    /// Page programs (per plane).
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
    /// Bytes moved over the flash channels.
    pub channel_bytes: u64,
    /// Dies in the array.
    pub dies: u32,
    /// Clock and busy time of each controller core.
    pub cores: Vec<(Frequency, SimDuration)>,
    /// DRAM installed.
    pub dram: ByteSize,
    /// Bytes over the host link (both directions).
    pub link_bytes: u64,
    /// Lanes of the host link.
    pub link_lanes: u32,
}

impl Activity {
    /// The energy this activity used under `p`. Idle power accrues over `elapsed`; busy core
    /// time is charged at the active power and the rest at the idle power.
    pub fn energy(&self, p: &ResolvedPower) -> Energy {
        let secs = self.elapsed.as_secs_f64();
        let uj = 1e-6;
        let n = &p.nand;
        let nand = (self.reads as f64 * n.read_uj
            + self.programs as f64 * n.program_uj
            + self.erases as f64 * n.erase_uj)
            * uj
            + self.dies as f64 * n.die_idle_mw * 1e-3 * secs;
        let c = &p.controller;
        let cores: f64 = self
            .cores
            .iter()
            .map(|&(clock, busy)| {
                let ghz = clock.hz() as f64 / 1e9;
                let busy = busy.as_secs_f64().min(secs);
                (c.active_mw_per_ghz * busy + c.idle_mw_per_ghz * (secs - busy)) * ghz * 1e-3
            })
            .sum();
        let gib = self.dram.bytes() as f64 / (1u64 << 30) as f64;
        Energy {
            nand,
            channels: self.channel_bytes as f64 * p.channel.pj_per_byte * 1e-12,
            controller: cores + c.static_w * secs,
            dram: p.dram.mw_per_gib * 1e-3 * gib * secs + self.link_bytes as f64 * p.dram.pj_per_byte * 1e-12,
            link: p.link.energy(self.link_bytes, self.link_lanes, secs),
            host_cpu: 0.0,
            host_dram: 0.0,
        }
    }
}

/// What the host side of a host-side FTL has used since the simulation started.
#[derive(Clone, Debug, Default)]
pub struct HostActivity {
    /// Simulated time so far.
    pub elapsed: SimDuration,
    /// Busy time of each host core the storage stack runs on.
    pub cores: Vec<SimDuration>,
    /// Host DRAM occupied, integrated over time (byte-seconds).
    pub dram_byte_secs: f64,
}

impl HostActivity {
    /// The host's energy under `p` (only the host components are set).
    pub fn energy(&self, p: &ResolvedPower) -> Energy {
        let secs = self.elapsed.as_secs_f64();
        let h = &p.host;
        let cpu = self
            .cores
            .iter()
            .map(|b| {
                let busy = b.as_secs_f64().min(secs);
                h.core_active_w * busy + h.core_idle_w * (secs - busy)
            })
            .sum();
        Energy {
            host_cpu: cpu,
            host_dram: h.dram_w_per_gib * self.dram_byte_secs / (1u64 << 30) as f64,
            ..Energy::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::power::PowerConfig;

    #[test]
    fn energy_is_linear_in_activity_and_idle_power_accrues_with_time() {
        let p = PowerConfig::default().resolve(nand::CellType::Mlc, false);
        let a = Activity { reads: 1000, elapsed: SimDuration::from_secs(1), dies: 0, ..Activity::default() };
        let e = a.energy(&p);
        assert!((e.nand - 1000.0 * p.nand.read_uj * 1e-6).abs() < 1e-12, "{e:?}");
        let b = Activity { reads: 2000, ..a.clone() };
        assert!((b.energy(&p).nand - 2.0 * e.nand).abs() < 1e-12);
        let idle = Activity { dies: 10, elapsed: SimDuration::from_secs(2), ..Activity::default() };
        assert!((idle.energy(&p).nand - 10.0 * 0.1e-3 * 2.0).abs() < 1e-12);
        let core = Activity {
            elapsed: SimDuration::from_secs(1),
            cores: vec![(Frequency::mhz(1000), SimDuration::from_millis(500))],
            ..Activity::default()
        };
        let c = core.energy(&p).controller;
        assert!((c - (0.130 * 0.5 + 0.030 * 0.5)).abs() < 1e-9, "{c}");
    }
}
