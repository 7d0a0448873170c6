//! `ssdlab figure softssd`: the SoftSSD board's measured figures (PRESETS.md, "Preset
//! softssd") against the `softssd` preset: the software NVMe interface alone, a single
//! request's phases, and how throughput grows with threads.

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::Result;
use firmware::trace::Phases;
use host::run::{RequestRecord, RequestSink, RunOptions};
use report::Report;
use sim::SimDuration;
use ssdlab::Start;

use super::FigureOpts;
use super::lab::{Lab, Verdict};

const PRESET: &str = "softssd";
/// Blocks per plane with `--quick`.
const QUICK_BLOCKS: u32 = 64;

pub fn run(o: &FigureOpts) -> Result<()> {
    lab(o)?.finish()
}

/// The phases of every read that went to flash (its command phase is not zero).
#[derive(Default)]
struct Misses(Vec<Phases>);

impl RequestSink for Misses {
    fn record(&mut self, r: &RequestRecord) {
        if r.ok && r.phases.command > SimDuration::ZERO {
            self.0.push(r.phases);
        }
    }
}

impl Misses {
    /// The distinct transfer phases (to the microsecond) and how many reads had each, longest
    /// first: "N x T us, ...".
    fn transfers(&self) -> String {
        let mut by = std::collections::BTreeMap::new();
        for p in &self.0 {
            *by.entry((p.transfer.as_nanos() + 500) / 1000).or_insert(0u64) += 1;
        }
        by.iter().rev().map(|(us, n)| format!("{n} x {us} us")).collect::<Vec<_>>().join(", ")
    }

    /// The mean of one phase, us.
    fn mean_us(&self, phase: impl Fn(&Phases) -> SimDuration) -> f64 {
        let sum: u64 = self.0.iter().map(|p| phase(p).as_nanos()).sum();
        sum as f64 / self.0.len().max(1) as f64 / 1e3
    }
}

fn iops(r: &Report, op: &str) -> f64 {
    r.ops.get(op).map_or(0.0, |o| o.throughput.iops)
}

/// Runs the board's measurements into a table, each published comparison judged.
pub fn lab(o: &FigureOpts) -> Result<Lab> {
    let mut lab = Lab::new("softssd", o)?;
    let opts = RunOptions::default();

    // 1. The software NVMe interface alone: the FTL bypassed, every command answered as soon
    //    as the host interface has handled it.
    let rig = lab.rig(&lab.device(PRESET, QUICK_BLOCKS, |c| c.ftl.bypass = true)?, Start::Fresh)?;
    let n = lab.pick(1500u64, 300).to_string();
    let job = lab.job(
        "nvme-alone",
        &[("rw", "randread"), ("bs", "16k"), ("iodepth", "16"), ("numjobs", "12"), ("number_ios", &n)],
    );
    let r = lab.run("host interface alone (FTL bypassed)", &rig, &[job], &opts)?;
    lab.row(
        "software NVMe interface",
        "commands per second, FTL bypassed, 16 KiB, 12 queues x QD16",
        format!("{:.0}", r.total.iops),
        "~25,000 (about 400 MB/s)",
        format!("{:.0} MB/s", r.total.mb_per_s),
    )
    .judge(Verdict::near(r.total.iops, 25_000.0, 25_000.0));
    drop(rig);

    // The device for the rest: 2 GiB written sequentially, then the 512 MiB data cache filled
    // with dirty lines so that later writes must evict (the board's measurements ran on a
    // written device).
    let rig = lab.rig(&lab.device(PRESET, QUICK_BLOCKS, |_| {})?, Start::Fresh)?;
    let fill = lab.job(
        "fill",
        &[
            ("rw", "write"),
            ("bs", "128k"),
            ("iodepth", "16"),
            ("numjobs", "4"),
            ("size", "2g"),
            ("offset_increment", "512m"),
            ("io_size", "512m"),
        ],
    );
    lab.run("writing 2 GiB", &rig, &[fill], &opts)?;
    let dirty = lab.job(
        "dirty",
        &[
            ("rw", "randwrite"),
            ("bs", "16k"),
            ("iodepth", "8"),
            ("numjobs", "8"),
            ("size", "2g"),
            ("number_ios", "6000"),
        ],
    );
    lab.run("filling the data cache with dirty lines", &rig, &[dirty], &opts)?;

    // 2. One thread's read: its command (setup and array) and transfer phases, over the reads
    //    that went to flash (those the cache served have neither).
    let job = lab.job(
        "one-read",
        &[("rw", "randread"), ("bs", "16k"), ("iodepth", "1"), ("size", "2g"), ("number_ios", "2000")],
    );
    let misses = Rc::new(RefCell::new(Misses::default()));
    let traced =
        RunOptions { per_request: Some(misses.clone() as Rc<RefCell<dyn RequestSink>>), ..opts.clone() };
    let r = lab.run("one thread of 16 KiB reads", &rig, &[job], &traced)?;
    let m = misses.borrow();
    let (cmd, xfer) = (m.mean_us(|p| p.command), m.mean_us(|p| p.transfer));
    lab.row(
        "one request's phases",
        "16 KiB read from flash, 1 thread: transfer phase (us, mean)",
        format!("{xfer:.0}"),
        "74",
        format!(
            "{} of {} reads went to flash; the preset's whole-page read transfer is 74 us (16 KiB and the OOB at 400 MT/s, 45.6 us, plus 28.36 us); a read moves only the 4 KiB units the data cache does not hold, so the flash reads' transfers were {}",
            m.0.len(),
            r.ops.get("read").map_or(0, |o| o.throughput.count),
            m.transfers()
        ),
    )
    .judge(Verdict::near(xfer, 74.0, 74.0));
    lab.row(
        "one request's phases",
        "16 KiB read from flash, 1 thread: command phase (us, mean)",
        format!("{cmd:.0}"),
        "~105",
        "setup and array time on the die".into(),
    )
    .judge(Verdict::near(cmd, 105.0, 105.0));
    drop(m);

    // 3. Throughput by threads (fio jobs at QD1, 16 KiB random over the 2 GiB region).
    let threads = [1u32, 4, 16, 32, 64];
    let (runtime, ramp) = (lab.pick("200ms", "50ms"), lab.pick("20ms", "5ms"));
    let mut by = Vec::new();
    for &t in &threads {
        let mut pair = [0.0; 2];
        for (k, rw) in ["randread", "randwrite"].into_iter().enumerate() {
            let nj = t.to_string();
            let job = lab.job(
                rw,
                &[
                    ("rw", rw),
                    ("bs", "16k"),
                    ("iodepth", "1"),
                    ("numjobs", &nj),
                    ("size", "2g"),
                    ("runtime", runtime),
                    ("time_based", "1"),
                    ("ramp_time", ramp),
                ],
            );
            let r = lab.run(&format!("{rw}, {t} threads"), &rig, &[job], &opts)?;
            pair[k] = iops(&r, if k == 0 { "read" } else { "write" });
        }
        by.push(pair);
    }
    let (r, w): (Vec<f64>, Vec<f64>) = by.iter().map(|p| (p[0], p[1])).unzip();
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{:.0}", x / 1e3)).collect::<Vec<_>>().join(" / ");
    lab.row(
        "throughput by threads",
        "kIOPS at 1 / 4 / 16 / 32 / 64 threads: reads",
        fmt(&r),
        "grows 1 -> 16, peaks at 32",
        "\"grows\": 16 threads at least 3x one; \"peaks\": 64 within 5% of 32".into(),
    )
    .judge(Verdict::shape(r[2] > 3.0 * r[0] && (r[4] / r[3] - 1.0).abs() < 0.05));
    lab.row(
        "throughput by threads",
        "kIOPS at 1 / 4 / 16 / 32 / 64 threads: writes (cache full)",
        fmt(&w),
        "grows 1 -> 16, peaks at 32",
        "\"peaks\": 32 within 15% of 64".into(),
    )
    .judge(Verdict::shape(w[0] < w[2] && w[2] < w[3] && w[3] / w[4] > 0.85));
    lab.row(
        "throughput by threads",
        "writes over reads at 1 and 4 threads",
        format!("{:.2} / {:.2}", w[0] / r[0].max(1e-9), w[1] / r[1].max(1e-9)),
        "writes slower",
        String::new(),
    )
    .judge(Verdict::shape(w[0] < r[0] && w[1] < r[1]));
    lab.row(
        "throughput by threads",
        "reads / writes at 64 threads (IOPS)",
        format!("{:.0} / {:.0}", r[4], w[4]),
        "capped by the software host interface (~25,000)",
        String::new(),
    )
    .judge(Verdict::shape([r[4], w[4]].iter().all(|v| (v / 25_000.0 - 1.0).abs() < 0.1)));
    Ok(lab)
}
