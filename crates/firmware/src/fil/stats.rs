//! What the FIL measures: per-operation phase times, program latency per page type, and
//! per-die / per-channel busy time.

use nand::PageType;
use sim::stats::Histogram;
use sim::{SimDuration, SimTime};

use crate::fil::txn::{FlashOp, FlowTag, TxnSource, TxnTiming};

/// Statistics of one operation type: latency and command-phase distributions, and the total
/// time spent in each phase (divide by `count` for the mean).
#[derive(Clone, Debug, Default)]
pub struct OpStats {
    /// Completed transactions.
    pub count: u64,
    /// Bytes moved over channels.
    pub bytes: u64,
    /// Submit to completion posted (ring, queue, die, channel), ns.
    pub latency: Histogram,
    /// Command setup and array phase, ns.
    pub command: Histogram,
    /// Total ring time: submit to FIL intake.
    pub ring: SimDuration,
    /// Total time waiting in the FIL queue for die and channel.
    pub queue_wait: SimDuration,
    /// Total time waiting for the channel after the array phase (reads).
    pub channel_wait: SimDuration,
    /// Total command time.
    pub command_total: SimDuration,
    /// Total channel transfer time.
    pub transfer: SimDuration,
}

impl OpStats {
    fn record(&mut self, t: &TxnTiming, bytes: u32) {
        self.count += 1;
        self.bytes += bytes as u64;
        self.latency.record_duration(t.completed.saturating_since(t.submitted));
        self.command.record_duration(t.command());
        self.ring += t.ring();
        self.queue_wait += t.queue_wait();
        self.channel_wait += t.channel_wait();
        self.command_total += t.command();
        self.transfer += t.transfer();
    }

    /// `total / count` (zero if nothing was recorded).
    pub fn mean(&self, total: SimDuration) -> SimDuration {
        SimDuration::from_nanos(total.as_nanos().checked_div(self.count).unwrap_or(0))
    }
}

/// The transactions one flow caused (or, for [`FlowTag::NONE`], no flow), counted where the
/// device-wide counters are: the same operations and sources, so the flows and the
/// unattributed bucket add up to [`FilStats`] exactly.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowFlash {
    /// Completed transactions per operation (read, program, erase) and source (user, mapping,
    /// GC): `ops[op][source]`.
    pub ops: [[u64; 3]; 3],
    /// Bytes moved over channels per operation (read, program, erase).
    pub bytes: [u64; 3],
}

impl FlowFlash {
    /// Transactions of `op`, every source.
    pub fn count(&self, op: FlashOp) -> u64 {
        self.ops[op as usize].iter().sum()
    }

    /// Transactions per source (user, mapping, GC), every operation.
    pub fn by_source(&self) -> [u64; 3] {
        std::array::from_fn(|s| self.ops.iter().map(|o| o[s]).sum())
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &FlowFlash) {
        for (a, b) in self.ops.iter_mut().flatten().zip(other.ops.iter().flatten()) {
            *a += b;
        }
        for (a, b) in self.bytes.iter_mut().zip(other.bytes) {
            *a += b;
        }
    }
}

/// FIL statistics over a run.
#[derive(Clone, Debug)]
pub struct FilStats {
    /// Reads.
    pub read: OpStats,
    /// Programs.
    pub program: OpStats,
    /// Erases.
    pub erase: OpStats,
    /// Completed transactions per source: user, mapping, GC.
    pub by_source: [u64; 3],
    /// Program command-phase time (setup + tPROG) per page type, in word-line order.
    pub program_by_page_type: Vec<(PageType, Histogram)>,
    /// Multi-plane batches started, and transactions in them.
    pub batches: u64,
    /// Transactions that went in batches of more than one plane.
    pub multi_plane_txns: u64,
    /// Time each die had an operation in progress (ns).
    pub die_busy_ns: Vec<u64>,
    /// Time each channel was transferring or sending commands (ns).
    pub channel_busy_ns: Vec<u64>,
    /// Transactions completed on each die: reads, programs, erases.
    pub die_ops: Vec<[u64; 3]>,
    /// Most transactions waiting in the FIL queues at once.
    pub max_queued: usize,
    /// When the statistics started.
    pub since: SimTime,
    /// Transactions per flow, indexed by [`FlowTag`] (0: no flow). Grows to the highest tag
    /// seen (empty until the first transaction), so a run allocates it once per flow.
    pub by_flow: Vec<FlowFlash>,
}

impl FilStats {
    pub(crate) fn new(dies: usize, channels: usize, page_types: &[PageType]) -> Self {
        FilStats {
            read: OpStats::default(),
            program: OpStats::default(),
            erase: OpStats::default(),
            by_source: [0; 3],
            program_by_page_type: page_types.iter().map(|&t| (t, Histogram::new())).collect(),
            batches: 0,
            multi_plane_txns: 0,
            die_busy_ns: vec![0; dies],
            channel_busy_ns: vec![0; channels],
            die_ops: vec![[0; 3]; dies],
            max_queued: 0,
            since: SimTime::ZERO,
            by_flow: Vec::new(),
        }
    }

    /// Counts a finished transaction of `flow`; `page_type` (the index of its page's type) is
    /// asked for programs only.
    #[allow(clippy::too_many_arguments)] // one call site, the engine's completion
    pub(crate) fn record(
        &mut self,
        die: usize,
        op: FlashOp,
        source: TxnSource,
        flow: FlowTag,
        t: &TxnTiming,
        bytes: u32,
        page_type: impl FnOnce() -> usize,
    ) {
        match op {
            FlashOp::Read => self.read.record(t, bytes),
            FlashOp::Program => {
                self.program.record(t, bytes);
                self.program_by_page_type[page_type()].1.record_duration(t.command());
            }
            FlashOp::Erase => self.erase.record(t, bytes),
        }
        self.die_ops[die][op as usize] += 1;
        let s = match source {
            TxnSource::User => 0,
            TxnSource::Mapping => 1,
            TxnSource::Gc => 2,
        };
        self.by_source[s] += 1;
        let f = flow.0 as usize;
        if f >= self.by_flow.len() {
            self.by_flow.resize(f + 1, FlowFlash::default());
        }
        let c = &mut self.by_flow[f];
        c.ops[op as usize][s] += 1;
        c.bytes[op as usize] += bytes as u64;
    }

    /// What flow `flow` caused (zero if it caused nothing).
    pub fn flow(&self, flow: FlowTag) -> FlowFlash {
        self.by_flow.get(flow.0 as usize).copied().unwrap_or_default()
    }

    /// The statistics of one operation type.
    pub fn op(&self, op: FlashOp) -> &OpStats {
        match op {
            FlashOp::Read => &self.read,
            FlashOp::Program => &self.program,
            FlashOp::Erase => &self.erase,
        }
    }

    /// Fraction of `elapsed` each die was busy.
    pub fn die_utilisation(&self, elapsed: SimDuration) -> Vec<f64> {
        utilisation(&self.die_busy_ns, elapsed)
    }

    /// Fraction of `elapsed` each channel was busy.
    pub fn channel_utilisation(&self, elapsed: SimDuration) -> Vec<f64> {
        utilisation(&self.channel_busy_ns, elapsed)
    }
}

fn utilisation(busy: &[u64], elapsed: SimDuration) -> Vec<f64> {
    let e = elapsed.as_nanos().max(1) as f64;
    busy.iter().map(|&b| b as f64 / e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_transaction_counts_once_for_the_device_and_once_for_its_flow() {
        let mut st = FilStats::new(2, 1, &[PageType::Lsb]);
        let t = TxnTiming::default();
        let (a, b) = (FlowTag::of_flow(0), FlowTag::of_flow(1));
        let txns = [
            (FlashOp::Read, TxnSource::User, a, 4096),
            (FlashOp::Read, TxnSource::Gc, b, 16384),
            (FlashOp::Program, TxnSource::Gc, b, 16384),
            (FlashOp::Erase, TxnSource::Gc, b, 0),
            (FlashOp::Read, TxnSource::Mapping, FlowTag::NONE, 16384),
        ];
        for (op, source, flow, bytes) in txns {
            st.record(0, op, source, flow, &t, bytes, || 0);
        }
        assert_eq!(st.flow(a).ops[FlashOp::Read as usize], [1, 0, 0]);
        assert_eq!(st.flow(b).by_source(), [0, 0, 3]);
        assert_eq!(st.flow(b).bytes, [16384, 16384, 0]);
        assert_eq!(st.flow(FlowTag::NONE).count(FlashOp::Read), 1);
        assert_eq!(st.flow(FlowTag::of_flow(7)), FlowFlash::default(), "a flow that did nothing");
        let mut sum = FlowFlash::default();
        for f in &st.by_flow {
            sum.add(f);
        }
        assert_eq!(
            [sum.count(FlashOp::Read), sum.count(FlashOp::Program), sum.count(FlashOp::Erase)],
            [st.read.count, st.program.count, st.erase.count]
        );
        assert_eq!(sum.by_source(), st.by_source);
        assert_eq!(sum.bytes, [st.read.bytes, st.program.bytes, st.erase.bytes]);
    }
}
