//! Simulated controller cores.
//!
//! A core runs one task at a time, non-preemptively: a task owns its core while it is being
//! polled and while it computes ([`Cx::compute`](crate::Cx::compute)); it gives the core up when
//! it suspends on anything else. Tasks woken while their core is busy wait in the core's FIFO run
//! queue. Every time a task takes a core it first pays the core's context-switch cost.
//!
//! Tasks spawned on [`CoreId::UNBOUND`] model hardware and the host: they never wait for a core.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::task::TaskKey;
use crate::time::SimDuration;
use crate::units::Frequency;

/// A core of the simulated controller (or [`CoreId::UNBOUND`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CoreId(pub(crate) u16);

impl CoreId {
    /// Not a controller core: hardware models and host-side tasks, which never contend for CPU.
    pub const UNBOUND: CoreId = CoreId(u16::MAX);

    /// Index of the core in the order it was added (meaningless for `UNBOUND`).
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Whether this is [`CoreId::UNBOUND`].
    pub fn is_unbound(self) -> bool {
        self == Self::UNBOUND
    }
}

/// Configuration of one controller core.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreSpec {
    /// Name shown in reports and traces, e.g. `"ftl (Cortex-A53)"`.
    pub name: String,
    /// Core clock; `compute(cycles)` lasts `cycles / clock`. Default: none, required.
    pub clock: Frequency,
    /// Cycles charged each time a task takes the core (coroutine switch). Default: 0.
    #[serde(default)]
    pub switch_cycles: u64,
}

impl CoreSpec {
    /// A core with no context-switch cost.
    pub fn new(name: impl Into<String>, clock: Frequency) -> Self {
        CoreSpec { name: name.into(), clock, switch_cycles: 0 }
    }
}

/// Per-core statistics over a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoreStats {
    /// The core's name.
    pub name: String,
    /// Time spent computing or switching.
    pub busy: SimDuration,
    /// Number of times a task took the core.
    pub switches: u64,
    /// Longest run queue seen.
    pub max_run_queue: usize,
    /// Busy time by role ([`Cx::set_role`](crate::Cx::set_role)), roles that used the core only,
    /// in the order roles were first named. Context switches count as role `other`.
    pub by_role: Vec<(String, SimDuration)>,
}

pub(crate) struct CoreState {
    pub spec: CoreSpec,
    /// The task that owns the core (polling, computing, or reserved while switching to it).
    pub holder: Option<TaskKey>,
    pub runq: VecDeque<TaskKey>,
    /// The holder is spinning for a lock (since when): a lock holder may take the core over.
    pub spinning: Option<(TaskKey, crate::time::SimTime)>,
    /// Nanoseconds per cycle in 32.32 fixed point.
    ns_per_cycle: u64,
    pub switch: SimDuration,
    pub busy_ns: u64,
    /// Busy nanoseconds by role index.
    pub busy_by_role: Vec<u64>,
    pub switches: u64,
    pub max_run_queue: usize,
}

impl CoreState {
    pub fn new(spec: CoreSpec) -> Self {
        assert!(spec.clock.hz() > 0, "core {} has a zero clock", spec.name);
        let ns_per_cycle = ((1_000_000_000u128 << 32) / spec.clock.hz() as u128) as u64;
        let mut core = CoreState {
            spec,
            holder: None,
            runq: VecDeque::new(),
            spinning: None,
            ns_per_cycle,
            switch: SimDuration::ZERO,
            busy_ns: 0,
            busy_by_role: Vec::new(),
            switches: 0,
            max_run_queue: 0,
        };
        core.switch = core.cycles(core.spec.switch_cycles);
        core
    }

    /// The duration of `cycles` cycles at this core's clock, rounded to the nearest ns.
    pub fn cycles(&self, cycles: u64) -> SimDuration {
        let fp = cycles as u128 * self.ns_per_cycle as u128;
        SimDuration::from_nanos(((fp + (1 << 31)) >> 32) as u64)
    }

    /// Adds `ns` of busy time for `role`.
    pub fn add_busy(&mut self, role: u16, ns: u64) {
        self.busy_ns += ns;
        let r = role as usize;
        if r >= self.busy_by_role.len() {
            self.busy_by_role.resize(r + 1, 0);
        }
        self.busy_by_role[r] += ns;
    }

    pub fn stats(&self, roles: &[crate::task::Label]) -> CoreStats {
        CoreStats {
            name: self.spec.name.clone(),
            busy: SimDuration::from_nanos(self.busy_ns),
            by_role: self
                .busy_by_role
                .iter()
                .enumerate()
                .filter(|(_, ns)| **ns > 0)
                .map(|(r, &ns)| (roles[r].to_string(), SimDuration::from_nanos(ns)))
                .collect(),
            switches: self.switches,
            max_run_queue: self.max_run_queue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_convert_at_the_core_clock() {
        let c = CoreState::new(CoreSpec::new("a53", Frequency(1_200_000_000)));
        assert_eq!(c.cycles(1200), SimDuration::from_micros(1));
        assert_eq!(c.cycles(1), SimDuration::from_nanos(1)); // 0.833 ns rounds to 1
        let r5 = CoreState::new(CoreSpec::new("r5", Frequency::mhz(500)));
        assert_eq!(r5.cycles(1_000_000), SimDuration::from_millis(2));
    }
}
