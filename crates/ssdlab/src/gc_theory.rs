//! Steady-state write amplification of uniform random 4 KiB writes, measured the way the
//! analytic models of cleaning define it, with the spare space the firmware really has
//! (`ssdlab figure gc-theory`, `tests/it/gc_theory.rs`, docs/gc-theory.md).
//!
//! The device is one plane with 4 KiB pages (one mapping unit per page, as the models
//! assume), an 8 KiB data cache (writes reach flash at once) and GC keeping `soft_free` free
//! blocks. It is filled sequentially, written at random (fio's `norandommap`: every write picks
//! an LBA uniformly) until the host has written `warmup` times its logical capacity and the flash
//! `warmup_flash` times its physical one, then measured over `windows`
//! windows of `window` times its capacity each, every window in `samples` runs with their own
//! seeds, the free blocks read between runs.
//!
//! The accounting: a model of N blocks of b units holding U logical units knows only closed
//! blocks. The firmware also holds blocks that are free (erased, waiting; on average F, read
//! between runs) and its open frontier blocks (user and GC, and under DFTL the mapping
//! stream's), half written on average with units that are nearly all valid. The models are
//! therefore evaluated at alpha = (N - F - open) b / (U - open b / 2), beside the nominal
//! alpha = N b / U of the configured over-provisioning.

use anyhow::{Context, Result, anyhow};
use firmware::config::DeviceConfig;
use firmware::device::Device;
use firmware::ftl::VictimPolicy;
use firmware::ftl::theory;
use firmware::platform::StoreChoice;
use host::workload::JobSpec;

/// One point of the sweep.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Blocks of the plane.
    pub blocks: u32,
    /// Pages (4 KiB, one unit each) per block.
    pub pages: u32,
    /// `ftl.op`: the fraction of raw capacity hidden from the host.
    pub op: f64,
    /// GC's victim policy.
    pub victim: VictimPolicy,
    /// `ftl.gc.pacing`: "eager" or "paced".
    pub pacing: &'static str,
    /// `None`: the full map in DRAM; `Some(c)`: DFTL with a CMT of the fraction `c` of the map
    /// (at least one segment).
    pub cmt_coverage: Option<f64>,
    /// Random writes before measuring, at least this many logical capacities from the host ...
    pub warmup: f64,
    /// ... and this many physical capacities programmed.
    pub warmup_flash: f64,
    /// Host writes per window, in logical capacities.
    pub window: f64,
    /// Windows measured.
    pub windows: u32,
    /// Runs per window (the free blocks are read after each).
    pub samples: u32,
    /// Seed of the device and (offset per run) of the workload.
    pub seed: u64,
}

/// GC keeps this many free blocks (soft threshold) and collects in the foreground at `HARD`.
pub const SOFT: u32 = 3;
/// See [`SOFT`].
pub const HARD: u32 = 1;
/// CMT segment size used for the DFTL points (the firmware's default).
pub const SEGMENT: u32 = 64;

impl Setup {
    /// A full-map point with the sweep's defaults: a warm-up of 2 logical capacities written
    /// and 6 physical ones programmed, then 2 windows of 1 logical capacity.
    pub fn new(blocks: u32, pages: u32, op: f64, victim: VictimPolicy, seed: u64) -> Setup {
        Setup {
            blocks,
            pages,
            op,
            victim,
            pacing: "eager",
            cmt_coverage: None,
            warmup: 2.0,
            warmup_flash: 6.0,
            window: 1.0,
            windows: 2,
            samples: 4,
            seed,
        }
    }

    /// Under DFTL, (segments the CMT holds, segments of the map): the share `cmt_coverage` of
    /// the map's segments, rounded, and at least four (the firmware's minimum CMT).
    pub fn cmt_segments(&self) -> Option<(u64, u64)> {
        let c = self.cmt_coverage?;
        let logical = (self.blocks as f64 * self.pages as f64 * (1.0 - self.op)).floor() as u64;
        let segments = logical.div_ceil(SEGMENT as u64);
        Some((((c * segments as f64).round() as u64).clamp(4.min(segments), segments), segments))
    }

    /// The device configuration.
    pub fn config(&self) -> Result<DeviceConfig> {
        let victim = victim_name(self.victim);
        let mapping = match self.cmt_coverage {
            None => "{ kind = \"full\" }".to_string(),
            Some(_) => {
                let (cached, _) = self.cmt_segments().unwrap_or((1, 1));
                let bytes = cached * SEGMENT as u64 * 8;
                format!("{{ kind = \"dftl\", cmt = \"{bytes}B\", segment_entries = {SEGMENT} }}")
            }
        };
        let text = format!(
            r#"
name = "gc-theory"
[geometry]
channels = 1
ways = 1
blocks = {blocks}
pages = {pages}
page_size = "4KiB"
[controller]
dram = "1GiB"
[host]
costs = {{ fetch = 0, parse = 0, dma = 0, completion = 0 }}
[ftl]
op = {op}
mapping = {mapping}
cache = {{ capacity = "8KiB" }}
gc = {{ victim = "{victim}", soft_free = {SOFT}, hard_free = {HARD}, pacing = "{pacing}" }}
costs = {{ lookup = 0, cmt_miss = 0, write_back = 0, gc_unit = 0, trim = 0 }}
"#,
            blocks = self.blocks,
            pages = self.pages,
            op = self.op,
            pacing = self.pacing,
        );
        DeviceConfig::from_toml(&text, "gc-theory device").map_err(|e| anyhow!("{e}"))
    }
}

/// The configuration name of a victim policy.
pub fn victim_name(v: VictimPolicy) -> &'static str {
    match v {
        VictimPolicy::Greedy => "greedy",
        VictimPolicy::CostBenefit => "cost-benefit",
        VictimPolicy::Random => "random",
        VictimPolicy::Fifo => "fifo",
    }
}

/// What one point measured, and the accounting the models are evaluated at.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Measured {
    /// `ftl.op`.
    pub op: f64,
    /// The victim policy's configuration name.
    pub victim: &'static str,
    /// `ftl.gc.pacing`.
    pub pacing: &'static str,
    /// The CMT's share of the map asked for (`None`: the full map).
    pub cmt_coverage: Option<f64>,
    /// The share it holds: whole segments, at least four (0 with the full map).
    pub cmt_share: f64,
    /// Blocks, and units per block (b).
    pub blocks: u32,
    /// Units per block.
    pub units_per_block: u32,
    /// Logical units (U).
    pub logical: u64,
    /// WAF (all streams) of each window.
    pub window_waf: Vec<f64>,
    /// WAF over all windows: units programmed (user + GC + mapping) per host unit.
    pub waf: f64,
    /// GC units programmed per host unit.
    pub gc_per_host: f64,
    /// Translation-page units programmed per host unit.
    pub mapping_per_host: f64,
    /// CMT misses per host unit (DFTL; 0 with the full map).
    pub cmt_misses_per_host: f64,
    /// Mean free blocks read between runs (F).
    pub mean_free_blocks: f64,
    /// Open frontier blocks assumed (user, GC, and mapping under DFTL).
    pub open_blocks: u32,
    /// Victims collected in the windows.
    pub victims: u64,
    /// Mean valid fraction of those victims (units moved / victims / b).
    pub victim_valid: f64,
    /// N b / U.
    pub alpha_nominal: f64,
    /// (N - F - open) b / (U - open b / 2).
    pub alpha: f64,
}

impl Measured {
    /// Greedy's mean-field model with this block size at the accounted alpha.
    pub fn greedy_model(&self) -> f64 {
        theory::greedy_waf_blocks(self.alpha, self.units_per_block)
    }
    /// Greedy's victim valid fraction in that model.
    pub fn greedy_model_valid(&self) -> f64 {
        theory::greedy_victim_valid_blocks(self.alpha, self.units_per_block)
    }
    /// Desnoyers' LRW/FIFO closed form (= Xiang-Kurkoski's large-block greedy) at the accounted
    /// alpha.
    pub fn lrw_model(&self) -> f64 {
        theory::lrw_waf(self.alpha)
    }
    /// The same closed form at the nominal over-provisioning (no free or open blocks).
    pub fn lrw_nominal(&self) -> f64 {
        theory::lrw_waf(self.alpha_nominal)
    }
    /// The model this policy is compared with: FIFO's closed form for FIFO, greedy's
    /// finite-block model otherwise (cost-benefit has no standard closed form).
    pub fn model(&self) -> f64 {
        if self.victim == "fifo" { self.lrw_model() } else { self.greedy_model() }
    }
    /// Measured over model, minus one.
    pub fn deviation(&self) -> f64 {
        self.waf / self.model() - 1.0
    }
    /// The largest relative difference between successive windows' WAF.
    pub fn window_spread(&self) -> f64 {
        self.window_waf.windows(2).map(|w| (w[1] / w[0] - 1.0).abs()).fold(0.0, f64::max)
    }
}

fn job(options: &str) -> Result<JobSpec> {
    let mut j = JobSpec::new("gc-theory");
    for kv in options.split_whitespace() {
        let (k, v) = kv.split_once('=').map_or((kv, None), |(k, v)| (k, Some(v)));
        j.set(k, v).with_context(|| format!("job option {kv}"))?;
    }
    Ok(j)
}

fn run(dev: &Device, options: &str, seed: u64) -> Result<()> {
    host::run::run_jobs(dev, &[job(options)?], seed, &mut |_| {})
        .map(|_| ())
        .map_err(|e| anyhow!("gc-theory run ({options}): {e}"))
}

fn programmed(s: &firmware::ftl::FtlStats) -> u64 {
    s.units_programmed.iter().sum()
}

/// Builds the device of `s`, brings it to steady state and measures it.
pub fn measure(s: &Setup) -> Result<Measured> {
    anyhow::ensure!(s.windows >= 1 && s.samples >= 1, "gc-theory: at least one window of one run");
    let cfg = s.config()?;
    let dev = Device::build(&cfg, &StoreChoice::Metadata, s.seed).map_err(|e| anyhow!("{e}"))?;
    let logical = dev.ftl.logical_units() as u64;
    let b = s.pages;
    run(&dev, &format!("rw=write bs=128k iodepth=4 size={}", logical * 4096), s.seed)?;
    let random = |n: u64| format!("rw=randwrite bs=4k iodepth=16 norandommap number_ios={}", n.max(1));
    let mut seed = s.seed.wrapping_mul(1_000_003);
    let mut next_seed = || {
        seed = seed.wrapping_add(1);
        seed
    };
    // Warm up until the host has rewritten `warmup` logical capacities and the flash has
    // programmed `warmup_flash` physical ones (with much spare, a rewrite of the logical space
    // turns the physical one over only partly).
    let physical = s.blocks as u64 * b as u64;
    let filled = programmed(&dev.ftl.stats());
    let chunk = (logical / 2).max(1);
    let mut host_written = 0u64;
    while host_written < (s.warmup * logical as f64) as u64
        || programmed(&dev.ftl.stats()) - filled < (s.warmup_flash * physical as f64) as u64
    {
        run(&dev, &random(chunk), next_seed())?;
        host_written += chunk;
    }
    let start = dev.ftl.stats();
    let cmt0 = dev.ftl.cmt_hits().map_or(0, |(_, m)| m);
    let mut window_waf = Vec::new();
    let (mut free_sum, mut free_n) = (0.0, 0u32);
    let per_run = (s.window * logical as f64 / s.samples as f64) as u64;
    for _ in 0..s.windows {
        let before = dev.ftl.stats();
        for _ in 0..s.samples {
            run(&dev, &random(per_run), next_seed())?;
            free_sum += dev.ftl.free_blocks() as f64;
            free_n += 1;
        }
        window_waf.push(dev.ftl.stats().waf_since(&before));
    }
    let end = dev.ftl.stats();
    let host = (end.host_units_written - start.host_units_written).max(1) as f64;
    let per_host = |i: usize| (end.units_programmed[i] - start.units_programmed[i]) as f64 / host;
    let victims = end.gc_invocations - start.gc_invocations;
    let moved = end.gc_units_moved - start.gc_units_moved;
    let cmt_misses = dev.ftl.cmt_hits().map_or(0, |(_, m)| m) - cmt0;
    let open = if s.cmt_coverage.is_some() { 3 } else { 2 };
    let mean_free = free_sum / free_n as f64;
    let (n, bf, u) = (s.blocks as f64, b as f64, logical as f64);
    let alpha = (n - mean_free - open as f64) * bf / (u - open as f64 * bf / 2.0);
    anyhow::ensure!(
        alpha > 1.0,
        "gc-theory: no spare space left after {mean_free:.1} free and {open} open blocks (op {})",
        s.op
    );
    Ok(Measured {
        op: s.op,
        victim: victim_name(s.victim),
        pacing: s.pacing,
        cmt_coverage: s.cmt_coverage,
        cmt_share: s.cmt_segments().map_or(0.0, |(c, n)| c as f64 / n as f64),
        blocks: s.blocks,
        units_per_block: b,
        logical,
        waf: (programmed(&end) - programmed(&start)) as f64 / host,
        window_waf,
        gc_per_host: per_host(1),
        mapping_per_host: per_host(2),
        cmt_misses_per_host: cmt_misses as f64 / host,
        mean_free_blocks: mean_free,
        open_blocks: open,
        victims,
        victim_valid: moved as f64 / victims.max(1) as f64 / bf,
        alpha_nominal: n * bf / u,
        alpha,
    })
}
