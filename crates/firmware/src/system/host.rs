//! The host side of a storage stack: host cores the stack's threads run on, the CPU each
//! command costs there, and the host memory it holds, accounted byte by byte over time.
//!
//! A bridge-based device has a thin driver here; a host-side FTL adds its mapping table, its
//! buffers and its FTL work on top (`ssdlab-hostftl`).

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sim::config::{ConfigError, ensure};
use sim::{ByteSize, CoreId, CoreSpec, Cx, Frequency, Sim, SimDuration, SimTime};

use crate::power::HostActivity;
use crate::system::memory::MemoryMeter;
use crate::system::totals::HostUse;

/// The host's storage stack: threads, CPU cost per command, fixed memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostStackConfig {
    /// Host cores the stack's threads run on (workers are spread over them). Default: 4.
    #[serde(default = "four")]
    pub cores: u32,
    /// Their clock. Default: 3GHz.
    #[serde(default = "ghz3")]
    pub clock: Frequency,
    /// CPU cycles to submit one command (system call, block layer, driver). Default: 6000
    /// (2 us at 3 GHz: the Linux block I/O submission path, assumption).
    #[serde(default = "c6000")]
    pub submit_cycles: u64,
    /// CPU cycles to complete one command (interrupt, completion, waking the thread). Default:
    /// 6000 (2 us at 3 GHz, assumption).
    #[serde(default = "c6000")]
    pub complete_cycles: u64,
    /// Host memory the stack holds regardless of load (driver, queues, tables). Default: 64MiB.
    #[serde(default = "mib64")]
    pub memory: ByteSize,
    /// Host memory per command in flight (request, descriptors, DMA mapping). Default: 4KiB.
    #[serde(default = "kib4")]
    pub memory_per_command: ByteSize,
}

fn four() -> u32 {
    4
}
fn ghz3() -> Frequency {
    Frequency(3_000_000_000)
}
fn c6000() -> u64 {
    6000
}
fn mib64() -> ByteSize {
    ByteSize::mib(64)
}
fn kib4() -> ByteSize {
    ByteSize::kib(4)
}

impl Default for HostStackConfig {
    fn default() -> Self {
        HostStackConfig {
            cores: four(),
            clock: ghz3(),
            submit_cycles: c6000(),
            complete_cycles: c6000(),
            memory: mib64(),
            memory_per_command: kib4(),
        }
    }
}

impl HostStackConfig {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure((1..=256).contains(&self.cores), "cores", || {
            format!("must be 1 to 256 (got {})", self.cores)
        })?;
        ensure(self.clock.hz() >= 1_000_000, "clock", || {
            format!("must be at least 1MHz (got {})", self.clock)
        })
    }
}

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
