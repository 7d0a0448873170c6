//! Workloads (phases) and what a run of one reports.

use sim::{Sim, SimDuration};

use crate::devices::Devices;

/// Reads or writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// `write` calls, each durable on return.
    Write,
    /// `read` calls.
    Read,
}

/// Where the calls of a phase go.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// One after another from offset 0 (on a fresh file, writes append).
    Seq,
    /// Uniformly random, size-aligned, within the file's first `file_bytes`.
    Rand,
}

/// One phase: every process issues `ops` calls of `size` bytes to its own file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Reads or writes.
    pub access: Access,
    /// Sequential or random.
    pub pattern: Pattern,
    /// Bytes per call.
    pub size: usize,
    /// Calls per process.
    pub ops: u64,
}

/// SplitMix64, the phases' only source of randomness (seeded per process).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The offsets of `phase`'s calls within a file of `file_bytes`, deterministic in `seed`.
pub fn offsets(phase: &Phase, file_bytes: u64, seed: u64) -> Vec<u64> {
    let slots = (file_bytes / phase.size as u64).max(1);
    let mut s = seed;
    (0..phase.ops)
        .map(|i| match phase.pattern {
            Pattern::Seq => (i % slots) * phase.size as u64,
            Pattern::Rand => (splitmix(&mut s) % slots) * phase.size as u64,
        })
        .collect()
}

/// The offsets process `p` uses in a run seeded with `seed` (each process its own stream).
pub fn process_offsets(phase: &Phase, file_bytes: u64, seed: u64, p: usize) -> Vec<u64> {
    offsets(phase, file_bytes, seed ^ ((p as u64 + 1) * 0x9E37_79B9))
}

/// What one phase achieved, in virtual time.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseResult {
    /// From the start until the last process's last call returned.
    pub elapsed: SimDuration,
    /// Calls (or, for a drain, records applied).
    pub ops: u64,
    /// Payload bytes.
    pub bytes: u64,
    /// Busy time of each core, by name.
    pub core_busy: Vec<(String, SimDuration)>,
    /// Busy time of the PM read and write channels and the PCIe link (both directions), ns.
    pub channel_busy_ns: [u64; 4],
}

impl PhaseResult {
    pub(crate) fn new(elapsed: SimDuration, ops: u64, bytes: u64, sim: &Sim, dev: &Devices) -> PhaseResult {
        PhaseResult {
            elapsed,
            ops,
            bytes,
            core_busy: sim.core_stats().into_iter().map(|s| (s.name, s.busy)).collect(),
            channel_busy_ns: [
                dev.pm_read.busy_ns(),
                dev.pm_write.busy_ns(),
                dev.link_up.busy_ns(),
                dev.link_down.busy_ns(),
            ],
        }
    }

    /// Thousands of calls per second.
    pub fn kops(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-12) / 1e3
    }

    /// Payload MB/s (10^6 bytes).
    pub fn mbps(&self) -> f64 {
        self.bytes as f64 / self.elapsed.as_secs_f64().max(1e-12) / 1e6
    }

    /// Fraction of the elapsed time the busiest core whose name starts with `prefix` was busy.
    pub fn busiest(&self, prefix: &str) -> f64 {
        let e = self.elapsed.as_nanos().max(1) as f64;
        self.core_busy
            .iter()
            .filter(|(n, _)| n.starts_with(prefix))
            .map(|(_, b)| b.as_nanos() as f64 / e)
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_aligned_in_range_and_deterministic() {
        let p = Phase { access: Access::Write, pattern: Pattern::Rand, size: 4096, ops: 1000 };
        let a = offsets(&p, 1 << 20, 7);
        assert_eq!(a, offsets(&p, 1 << 20, 7));
        assert_ne!(a, offsets(&p, 1 << 20, 8));
        assert!(a.iter().all(|o| o % 4096 == 0 && *o < 1 << 20));
        let s = offsets(&Phase { pattern: Pattern::Seq, ..p }, 8192, 0);
        assert_eq!(&s[..3], &[0, 4096, 0]);
    }
}
