//! What a physical workload measured.

use std::fmt;

use firmware::fil::{FlashOp, OpStats};
use firmware::platform::Platform;
use serde::Serialize;
use sim::stats::Summary;
use sim::{SimDuration, SimTime};

use crate::phys::workload::PhysWorkload;

/// Results of one operation type.
#[derive(Clone, Debug, Serialize)]
pub struct OpReport {
    /// Completed transactions.
    pub count: u64,
    /// Transactions per second of simulated time.
    pub per_sec: f64,
    /// Page data moved per second (MB/s, 10^6 bytes), excluding OOB.
    pub mb_per_sec: f64,
    /// Submit-to-completion latency, ns.
    pub latency_ns: Summary,
    /// Mean time in the FIL queue, ns.
    pub mean_queue_wait_ns: u64,
    /// Mean wait for the channel after tR, ns.
    pub mean_channel_wait_ns: u64,
    /// Mean command phase (setup + array), ns.
    pub mean_command_ns: u64,
    /// Mean transfer phase, ns.
    pub mean_transfer_ns: u64,
}

/// The report of a physical workload run.
#[derive(Clone, Debug, Serialize)]
pub struct PhysReport {
    /// The device preset or configuration name.
    pub device: String,
    /// The workload as run.
    pub workload: PhysWorkload,
    /// Dies the workload used.
    pub dies_used: u32,
    /// Simulated time from the first submission to the last completion.
    pub elapsed: SimDuration,
    /// Reads, if any.
    pub read: Option<OpReport>,
    /// Programs, if any.
    pub program: Option<OpReport>,
    /// Erases, if any.
    pub erase: Option<OpReport>,
    /// Program command phase per page type, ns.
    pub program_by_page_type: Vec<(String, Summary)>,
    /// Transactions that went in multi-plane batches.
    pub multi_plane_txns: u64,
    /// Busy fraction of each channel.
    pub channel_utilisation: Vec<f64>,
    /// Busy fraction of each die.
    pub die_utilisation: Vec<f64>,
}

impl PhysReport {
    pub(crate) fn new(p: &Platform, w: &PhysWorkload, start: SimTime, end: SimTime) -> Self {
        let st = p.fil.stats();
        let elapsed = end.saturating_since(start);
        let secs = elapsed.as_secs_f64().max(1e-12);
        let page = p.fil.geometry().page_size.bytes() as f64;
        let op = |op: FlashOp| -> Option<OpReport> {
            let s: &OpStats = st.op(op);
            (s.count > 0).then(|| {
                let data = match (op, w.read_bytes) {
                    (FlashOp::Erase, _) => 0.0,
                    (FlashOp::Read, Some(b)) => b.bytes() as f64,
                    _ => page,
                };
                OpReport {
                    count: s.count,
                    per_sec: s.count as f64 / secs,
                    mb_per_sec: s.count as f64 * data / secs / 1e6,
                    latency_ns: s.latency.summary(),
                    mean_queue_wait_ns: s.mean(s.queue_wait).as_nanos(),
                    mean_channel_wait_ns: s.mean(s.channel_wait).as_nanos(),
                    mean_command_ns: s.mean(s.command_total).as_nanos(),
                    mean_transfer_ns: s.mean(s.transfer).as_nanos(),
                }
            })
        };
        PhysReport {
            device: p.config.name.clone(),
            workload: w.clone(),
            dies_used: w.span(p.fil.geometry()).die_count(),
            elapsed,
            read: op(FlashOp::Read),
            program: op(FlashOp::Program),
            erase: op(FlashOp::Erase),
            program_by_page_type: st
                .program_by_page_type
                .iter()
                .filter(|(_, h)| h.count() > 0)
                .map(|(t, h)| (t.to_string(), h.summary()))
                .collect(),
            multi_plane_txns: st.multi_plane_txns,
            channel_utilisation: st.channel_utilisation(elapsed),
            die_utilisation: st.die_utilisation(elapsed),
        }
    }

    /// Transactions of every type per second.
    pub fn total_per_sec(&self) -> f64 {
        [&self.read, &self.program, &self.erase].iter().filter_map(|o| o.as_ref()).map(|o| o.per_sec).sum()
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn mean_max(v: &[f64]) -> (f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    (mean * 100.0, v.iter().copied().fold(0.0, f64::max) * 100.0)
}

impl fmt::Display for PhysReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "device {} | {} dies used | {:?} x {} | qd {} | simulated {:#}",
            self.device,
            self.dies_used,
            self.workload.op,
            self.workload.count,
            self.workload.qd,
            self.elapsed
        )?;
        writeln!(
            f,
            "{:<8} {:>9} {:>11} {:>9} {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} {:>8}",
            "op",
            "count",
            "per sec",
            "MB/s",
            "mean us",
            "p99 us",
            "max us",
            "queue",
            "ch wait",
            "command",
            "xfer"
        )?;
        for (name, o) in [("read", &self.read), ("program", &self.program), ("erase", &self.erase)] {
            let Some(o) = o else { continue };
            writeln!(
                f,
                "{:<8} {:>9} {:>11.0} {:>9.1} {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} {:>8}",
                name,
                o.count,
                o.per_sec,
                o.mb_per_sec,
                us(o.latency_ns.mean as u64),
                us(o.latency_ns.p99),
                us(o.latency_ns.max),
                us(o.mean_queue_wait_ns),
                us(o.mean_channel_wait_ns),
                us(o.mean_command_ns),
                us(o.mean_transfer_ns),
            )?;
        }
        for (t, s) in &self.program_by_page_type {
            writeln!(f, "program command phase, {t} pages: {} samples, median {} us", s.count, us(s.p50))?;
        }
        let (cm, cx) = mean_max(&self.channel_utilisation);
        let (dm, dx) = mean_max(&self.die_utilisation);
        write!(
            f,
            "utilisation: channels mean {cm:.1}% max {cx:.1}% | dies mean {dm:.1}% max {dx:.1}% | multi-plane txns {}",
            self.multi_plane_txns
        )
    }
}
