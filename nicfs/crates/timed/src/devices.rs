//! The shared devices of the model and how counted accesses become time.
//!
//! ```text
//!   host cores ───────────────┐              PM: read channel  (dimms x read bandwidth)
//!   host copy engine ─────────┼────────────►     write channel (dimms x write bandwidth)
//!   NIC cores ── PCIe link ───┘                  + read latency per miss, write latency per fence
//!               (up / down channels, round trip per DMA read or flush)
//! ```
//!
//! A channel serves transfers in the order they are charged, each taking bytes / bandwidth:
//! agents that use it at once queue, so bandwidth is shared, not per agent. Latencies are not
//! shared (many misses can be in flight at once).
//!
//! Charging rules (one step's counts at a time):
//! 1. Host: each read is a dependent miss (its latency in series, its bytes on the read
//!    channel); writes (flushes, non-temporal stores) leave the core no faster than the write
//!    channel takes them (the core's write-combining buffers fill); a fence also waits the
//!    write latency. The core is busy throughout (stalled on memory).
//! 2. NIC: each DMA costs descriptor cycles on the NIC core; reads wait a PCIe round trip plus
//!    the PM read; writes are posted (link, then PM write channel); a fence is a read-back
//!    that waits a round trip after the writes land. The core is free while it waits.
//! 3. Copy engine: each request costs a setup; it reads the log and writes the file blocks on
//!    the PM channels; a fence waits for the writes plus the write latency.

use std::cell::Cell;

use sim::{Cx, SimDuration, SimTime};

use crate::config::TimedConfig;
use crate::meter::Counts;

/// A transfer resource shared by everyone who charges it.
pub struct Channel {
    free_at: Cell<SimTime>,
    mbps: u64,
    busy: Cell<u64>,
}

impl Channel {
    /// A channel of `mbps` MB/s (bytes per microsecond).
    pub fn new(mbps: u64) -> Channel {
        Channel { free_at: Cell::new(SimTime::ZERO), mbps, busy: Cell::new(0) }
    }

    /// Queues `bytes` at `at`; returns when the last byte is through.
    pub fn reserve(&self, at: SimTime, bytes: u64) -> SimTime {
        if bytes == 0 {
            return at;
        }
        let ns = (bytes * 1000).div_ceil(self.mbps);
        let start = at.max(self.free_at.get());
        let end = start + SimDuration::from_nanos(ns);
        self.free_at.set(end);
        self.busy.set(self.busy.get() + ns);
        end
    }

    /// Nanoseconds the channel has been busy.
    pub fn busy_ns(&self) -> u64 {
        self.busy.get()
    }
}

/// PM and the PCIe link of one modelled machine.
pub struct Devices {
    /// The model.
    pub cfg: TimedConfig,
    /// PM reads (all DIMMs).
    pub pm_read: Channel,
    /// PM writes (all DIMMs).
    pub pm_write: Channel,
    /// PCIe, host to NIC (DMA read data).
    pub link_up: Channel,
    /// PCIe, NIC to host (DMA write data).
    pub link_down: Channel,
}

fn ns(n: u64) -> SimDuration {
    SimDuration::from_nanos(n)
}

impl Devices {
    /// Idle devices for `cfg`.
    pub fn new(cfg: &TimedConfig) -> Devices {
        Devices {
            cfg: cfg.clone(),
            pm_read: Channel::new(cfg.pm.read_mbps_per_dimm * cfg.pm.dimms),
            pm_write: Channel::new(cfg.pm.write_mbps_per_dimm * cfg.pm.dimms),
            link_up: Channel::new(cfg.pcie.mbps),
            link_down: Channel::new(cfg.pcie.mbps),
        }
    }

    /// When a host core that starts at `at` is done with the accesses `c` (rule 1).
    pub fn host_done(&self, at: SimTime, c: &Counts) -> SimTime {
        let pm = &self.cfg.pm;
        let mut t = at + ns(c.llc_hits * pm.llc_hit_ns);
        if c.reads > 0 {
            t = self.pm_read.reserve(t, c.read_bytes) + ns(c.reads * pm.read_latency_ns);
        }
        t = t.max(self.pm_write.reserve(t, c.write_bytes));
        t + ns(c.fences * pm.write_latency_ns)
    }

    /// Charges host accesses `c` and `cycles` of CPU to the running task's (host) core.
    pub async fn host(&self, cx: &Cx, cycles: u64, c: &Counts) {
        cx.compute(cycles).await;
        let end = self.host_done(cx.now(), c);
        cx.compute_for(end.saturating_since(cx.now())).await;
    }

    /// Charges the NIC's DMA accesses `c` and `cycles` of CPU to the running task's (NIC)
    /// core (rule 2).
    pub async fn nic(&self, cx: &Cx, cycles: u64, c: &Counts) {
        let dmas = c.reads + c.writes + c.fences;
        cx.compute(cycles + dmas * self.cfg.pcie.descriptor_cycles).await;
        let (pm, pcie) = (&self.cfg.pm, &self.cfg.pcie);
        let mut t = cx.now();
        if c.reads > 0 {
            let pm_end = self.pm_read.reserve(t, c.read_bytes);
            let link_end = self.link_up.reserve(t, c.read_bytes);
            t = pm_end.max(link_end) + ns(c.reads * (pcie.rtt_ns + pm.read_latency_ns));
        }
        let sent = self.link_down.reserve(t, c.write_bytes);
        let written = self.pm_write.reserve(sent, c.write_bytes);
        if c.fences > 0 {
            t = t.max(written) + ns(c.fences * pcie.rtt_ns + pm.write_latency_ns);
        }
        cx.sleep_until(t).await;
    }

    /// Runs the host copy engine's accesses `c` for `requests` copy requests (rule 3); the
    /// caller (the NIC's patch stage) waits for it, its core free.
    pub async fn copy(&self, cx: &Cx, requests: u64, c: &Counts) {
        if requests == 0 && c.is_empty() {
            return;
        }
        let pm = &self.cfg.pm;
        // Posting the requests and learning they are done: one round trip.
        let mut t = cx.now() + ns(self.cfg.pcie.rtt_ns + requests * self.cfg.pcie.copy_setup_ns);
        if c.reads > 0 {
            t = self.pm_read.reserve(t, c.read_bytes) + ns(pm.read_latency_ns);
        }
        let written = self.pm_write.reserve(t, c.write_bytes);
        if c.fences > 0 {
            t = t.max(written) + ns(pm.write_latency_ns);
        }
        cx.sleep_until(t).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_is_shared_in_order() {
        let ch = Channel::new(1000); // 1 byte per ns
        let t0 = SimTime::ZERO;
        assert_eq!(ch.reserve(t0, 100), SimTime::from_nanos(100));
        // A second agent at the same instant queues behind the first.
        assert_eq!(ch.reserve(t0, 100), SimTime::from_nanos(200));
        assert_eq!(ch.reserve(SimTime::from_nanos(500), 0), SimTime::from_nanos(500));
        assert_eq!(ch.busy_ns(), 200);
    }

    #[test]
    fn a_host_fence_waits_for_the_writes_and_the_write_latency() {
        let cfg = TimedConfig::default();
        let d = Devices::new(&cfg);
        let bw = cfg.pm.write_mbps_per_dimm * cfg.pm.dimms;
        let c = Counts { writes: 1, write_bytes: 4096, fences: 1, ..Counts::default() };
        let end = d.host_done(SimTime::ZERO, &c);
        assert_eq!(end.as_nanos(), (4096 * 1000u64).div_ceil(bw) + cfg.pm.write_latency_ns);
        let r = Counts { reads: 2, read_bytes: 128, llc_hits: 3, ..Counts::default() };
        let d = Devices::new(&cfg);
        let end = d.host_done(SimTime::ZERO, &r);
        let read_bw = cfg.pm.read_mbps_per_dimm * cfg.pm.dimms;
        let want = 3 * cfg.pm.llc_hit_ns + (128 * 1000u64).div_ceil(read_bw) + 2 * cfg.pm.read_latency_ns;
        assert_eq!(end.as_nanos(), want);
    }
}
