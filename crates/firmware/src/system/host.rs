//! The host side of a storage stack: host cores the stack's threads run on, the CPU each
//! command costs there, and the host memory it holds, accounted byte by byte over time.
//!
//! A bridge-based device has a thin driver here; a host-side FTL adds its mapping table, its
//! buffers and its FTL work on top (`ssdlab-hostftl`).

use std::cell::RefCell;
use std::rc::Rc;

use sim::{CoreId, CoreSpec, Cx, Sim, SimDuration, SimTime};

use crate::config::HostStackConfig;
use crate::power::{Energy, HostActivity, ResolvedPower};
use crate::system::memory::MemoryMeter;
use crate::system::totals::HostUse;

/// The host stack running in a simulation.
pub struct HostStack {
    cx: Cx,
    cfg: HostStackConfig,
    cores: Vec<CoreId>,
    memory: RefCell<MemoryMeter>,
}

impl HostStack {
    /// Adds the stack's host cores to `sim` and holds its fixed memory. `cfg` must be validated.
    pub fn start(sim: &Sim, cfg: &HostStackConfig) -> Rc<HostStack> {
        let cores =
            (0..cfg.cores).map(|i| sim.add_core(CoreSpec::new(format!("host {i}"), cfg.clock))).collect();
        let cx = sim.cx();
        let mut memory = MemoryMeter::new(cx.now());
        memory.set("driver", cfg.memory.bytes(), cx.now());
        Rc::new(HostStack { cx, cfg: cfg.clone(), cores, memory: RefCell::new(memory) })
    }

    /// The configuration.
    pub fn config(&self) -> &HostStackConfig {
        &self.cfg
    }

    /// The host cores, in order.
    pub fn cores(&self) -> &[CoreId] {
        &self.cores
    }

    /// Runs `cycles` of host CPU work: on the calling task's core if it is one of the stack's,
    /// else on host core `hint` (modulo their number) in a task of its own, waited for.
    pub async fn cpu(&self, cycles: u64, hint: usize) {
        if cycles == 0 {
            return;
        }
        if self.cores.contains(&self.cx.core()) {
            self.cx.compute(cycles).await;
            return;
        }
        let core = self.cores[hint % self.cores.len()];
        let cx = self.cx.clone();
        // A join handle of a finished task cannot fail.
        let _ = self.cx.spawn(core, "host cpu", async move { cx.compute(cycles).await }).await;
    }

    /// A command entered the stack: its submission CPU and its memory.
    pub async fn submit(&self, hint: usize) {
        self.add_memory("commands in flight", self.cfg.memory_per_command.bytes() as i64);
        self.cpu(self.cfg.submit_cycles, hint).await;
    }

    /// A command left the stack: its completion CPU; its memory is freed.
    pub async fn complete(&self, hint: usize) {
        self.cpu(self.cfg.complete_cycles, hint).await;
        self.add_memory("commands in flight", -(self.cfg.memory_per_command.bytes() as i64));
    }

    /// Sets the memory held for `what`, bytes.
    pub fn set_memory(&self, what: &'static str, bytes: u64) {
        self.memory.borrow_mut().set(what, bytes, self.cx.now());
    }

    /// Changes the memory held for `what` by `delta` bytes.
    pub fn add_memory(&self, what: &'static str, delta: i64) {
        self.memory.borrow_mut().add(what, delta, self.cx.now());
    }

    /// Host memory held now, bytes.
    pub fn memory(&self) -> u64 {
        self.memory.borrow().total()
    }

    /// Busy time of the stack's cores, summed.
    pub fn busy(&self) -> SimDuration {
        let stats = self.cx.core_stats();
        let ns = self.cores.iter().map(|c| stats[c.index()].busy.as_nanos()).sum();
        SimDuration::from_nanos(ns)
    }

    /// What the host side has used so far, for the power model.
    pub fn activity(&self) -> HostActivity {
        let stats = self.cx.core_stats();
        let now = self.cx.now();
        HostActivity {
            elapsed: now.saturating_since(SimTime::ZERO),
            cores: self.cores.iter().map(|c| stats[c.index()].busy).collect(),
            dram_byte_secs: self.memory.borrow().byte_secs(now),
        }
    }

    /// The host side's energy so far under `p` (only its host components are set).
    pub fn energy(&self, p: &ResolvedPower) -> Energy {
        self.activity().energy(p)
    }

    /// The host resources used, for the report.
    pub fn usage(&self) -> HostUse {
        let m = self.memory.borrow();
        HostUse {
            cores: self.cores.len() as u32,
            busy: self.busy(),
            memory: m.total(),
            peak_memory: m.peak(),
            memory_by_use: m.by_use(),
        }
    }
}
