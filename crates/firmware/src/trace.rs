//! Where a request's time went. Phases are disjoint, so for one command they add up to its
//! latency (the firmware's own CPU time and core waits land in `firmware`).

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use sim::SimDuration;

/// Number of phases.
pub const PHASES: usize = 13;

/// Time per phase (serialised as nanoseconds).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phases {
    /// Submission to fetch: doorbell, arbitration, waiting for the fetcher.
    #[serde(with = "sim::time::as_nanos")]
    pub queue_wait: SimDuration,
    /// Fetching the command (CPU time and the link) and handing it to the queue's workers.
    #[serde(with = "sim::time::as_nanos")]
    pub fetch: SimDuration,
    /// Fetched, waiting for a free worker coroutine of its queue.
    #[serde(with = "sim::time::as_nanos")]
    pub worker_wait: SimDuration,
    /// Waiting for and taking locks on shared firmware tables and cache lines (lock-based
    /// architectures; spinning counts here too).
    #[serde(with = "sim::time::as_nanos", default)]
    pub lock: SimDuration,
    /// Data cache: lookups, waiting for a free line (including write-backs it forces).
    #[serde(with = "sim::time::as_nanos")]
    pub cache: SimDuration,
    /// Mapping-table misses: loading entries, writing translation pages back.
    #[serde(with = "sim::time::as_nanos")]
    pub mapping: SimDuration,
    /// Waiting in the FIL: ring, die queue, channel.
    #[serde(with = "sim::time::as_nanos")]
    pub fil_wait: SimDuration,
    /// Die command phase: setup and array time.
    #[serde(with = "sim::time::as_nanos")]
    pub command: SimDuration,
    /// Channel data transfer.
    #[serde(with = "sim::time::as_nanos")]
    pub transfer: SimDuration,
    /// Software ECC correction.
    #[serde(with = "sim::time::as_nanos")]
    pub ecc: SimDuration,
    /// Host data transfer over PCIe.
    #[serde(with = "sim::time::as_nanos")]
    pub dma: SimDuration,
    /// Completion entry, interrupt and host handling.
    #[serde(with = "sim::time::as_nanos")]
    pub completion: SimDuration,
    /// Everything else: firmware CPU time and waiting for a core.
    #[serde(with = "sim::time::as_nanos")]
    pub firmware: SimDuration,
}

impl Phases {
    /// Names and values, in pipeline order.
    pub fn entries(&self) -> [(&'static str, SimDuration); PHASES] {
        [
            ("queue_wait", self.queue_wait),
            ("fetch", self.fetch),
            ("worker_wait", self.worker_wait),
            ("lock", self.lock),
            ("cache", self.cache),
            ("mapping", self.mapping),
            ("fil_wait", self.fil_wait),
            ("command", self.command),
            ("transfer", self.transfer),
            ("ecc", self.ecc),
            ("dma", self.dma),
            ("completion", self.completion),
            ("firmware", self.firmware),
        ]
    }

    /// Phases from values in [`entries`](Self::entries) order.
    pub fn from_entries(v: [SimDuration; PHASES]) -> Phases {
        let [
            queue_wait,
            fetch,
            worker_wait,
            lock,
            cache,
            mapping,
            fil_wait,
            command,
            transfer,
            ecc,
            dma,
            completion,
            firmware,
        ] = v;
        Phases {
            queue_wait,
            fetch,
            worker_wait,
            lock,
            cache,
            mapping,
            fil_wait,
            command,
            transfer,
            ecc,
            dma,
            completion,
            firmware,
        }
    }

    /// Every phase divided by `n` (the mean of `n` requests); zero for `n = 0`.
    pub fn mean(&self, n: u64) -> Phases {
        let d = |v: SimDuration| SimDuration::from_nanos(v.as_nanos().checked_div(n).unwrap_or(0));
        Phases {
            queue_wait: d(self.queue_wait),
            fetch: d(self.fetch),
            worker_wait: d(self.worker_wait),
            lock: d(self.lock),
            cache: d(self.cache),
            mapping: d(self.mapping),
            fil_wait: d(self.fil_wait),
            command: d(self.command),
            transfer: d(self.transfer),
            ecc: d(self.ecc),
            dma: d(self.dma),
            completion: d(self.completion),
            firmware: d(self.firmware),
        }
    }

    /// Sum of every phase.
    pub fn total(&self) -> SimDuration {
        self.entries().iter().map(|(_, d)| *d).sum()
    }

    /// Records a FIL transaction's phases.
    pub fn add_flash(&mut self, t: &crate::fil::TxnTiming) {
        self.fil_wait += t.ring() + t.queue_wait() + t.channel_wait();
        self.command += t.command();
        self.transfer += t.transfer();
    }
}

impl AddAssign for Phases {
    fn add_assign(&mut self, o: Phases) {
        self.queue_wait += o.queue_wait;
        self.fetch += o.fetch;
        self.worker_wait += o.worker_wait;
        self.lock += o.lock;
        self.cache += o.cache;
        self.mapping += o.mapping;
        self.fil_wait += o.fil_wait;
        self.command += o.command;
        self.transfer += o.transfer;
        self.ecc += o.ecc;
        self.dma += o.dma;
        self.completion += o.completion;
        self.firmware += o.firmware;
    }
}
