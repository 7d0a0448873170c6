//! The NICFS paper's figure set, run in the model, each value beside the published one
//! (../shared/design/PRESETS.md, NICFS). Direction and rough size are the goal.
//!
//! 1. Throughput of 256 B, 4 KiB and 16 KiB writes and reads, one process: NICFS against the
//!    Ext4-DAX-style and Ext4-style kernel models and the in-place library.
//! 2. Back-end against front-end throughput (4 KiB writes): front ends log with the back end
//!    idle, then the back end applies everything alone.
//! 3. One, two and four front ends (4 KiB writes, sustained).
//! 4. The back end without its index-block cache (4 KiB writes at random offsets of a file
//!    large enough to need indirect blocks).
//! 5. The back end without its pipeline.

use crate::config::{PatchLock, TimedConfig};
use crate::inplace::InPlaceMachine;
use crate::kernel::{KernelMachine, Kind};
use crate::nicfs::{NicfsMachine, NicfsSetup};
use crate::study::{Access, Pattern, Phase, PhaseResult};

/// How much work each measurement does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// File bytes per process in the throughput figure (phases write or read it once).
    pub file_bytes: u64,
    /// Log data per front end where the back end runs beside the front ends (small: sustained).
    pub log_bytes: u64,
    /// Bytes each front end logs in the drain figures.
    pub drain_bytes: u64,
}

impl Scale {
    /// The scale of `nicfs figure paper`.
    pub fn paper() -> Scale {
        Scale { file_bytes: 16 << 20, log_bytes: 1 << 20, drain_bytes: 8 << 20 }
    }

    /// A small scale for tests.
    pub fn small() -> Scale {
        Scale { file_bytes: 1 << 20, log_bytes: 256 << 10, drain_bytes: 1 << 20 }
    }
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Which figure.
    pub figure: &'static str,
    /// What is compared.
    pub measure: String,
    /// The model's values, in words ("nicfs 1.2 M ops/s, ext4-dax 0.8 M ops/s").
    pub values: String,
    /// The model's ratio.
    pub ratio: f64,
    /// The published ratio or shape, in words.
    pub published: String,
    /// Whether the model's ratio lies in the published direction.
    pub same_direction: bool,
}

fn phase(access: Access, pattern: Pattern, size: usize, bytes: u64) -> Phase {
    Phase { access, pattern, size, ops: (bytes / size as u64).max(1) }
}

fn phases(size: usize, bytes: u64) -> [Phase; 4] {
    [
        phase(Access::Write, Pattern::Seq, size, bytes),
        phase(Access::Write, Pattern::Rand, size, bytes),
        phase(Access::Read, Pattern::Seq, size, bytes),
        phase(Access::Read, Pattern::Rand, size, bytes),
    ]
}

/// Runs the four phases in order on one system; `settle` runs before each read phase.
fn four(
    mut run: impl FnMut(&Phase) -> Result<PhaseResult, String>,
    mut settle: impl FnMut() -> Result<(), String>,
    size: usize,
    bytes: u64,
) -> Result<[f64; 4], String> {
    let mut ops = [0.0; 4];
    for (i, p) in phases(size, bytes).iter().enumerate() {
        if p.access == Access::Read {
            settle()?;
        }
        ops[i] = run(p)?.kops();
    }
    Ok(ops)
}

const PHASE_NAMES: [&str; 4] =
    ["write, append", "write, random overwrite", "read, sequential", "read, random"];

/// One line of figure 1: thousands of calls per second of each system.
#[derive(Clone, Debug, PartialEq)]
pub struct Throughput {
    /// Bytes per call.
    pub size: usize,
    /// Which phase.
    pub phase: &'static str,
    /// NICFS (sustained: the back end keeps up or the front end waits).
    pub nicfs: f64,
    /// Ext4-DAX, durable on return (O_DSYNC).
    pub dax_sync: f64,
    /// Ext4-DAX as mounted by default (5 s commits; not durable on return).
    pub dax_default: f64,
    /// Ext4 on a PM block device, `fdatasync` after each write.
    pub ext4: f64,
    /// The in-place library on the same PM.
    pub inplace: f64,
}

impl Throughput {
    fn published(&self) -> (&'static str, &'static str) {
        match (self.size, self.phase.starts_with("write")) {
            (256, true) => ("1.51", ">= 2"),
            (256, false) => ("1.19", ">= 2"),
            _ => ("-", "1.10-1.21"),
        }
    }
}

/// Figure 1: throughput by size and phase, one process, every system.
pub fn throughput(cfg: &TimedConfig, s: &Scale, seed: u64) -> Result<Vec<Throughput>, String> {
    let mut out = Vec::new();
    let bytes = s.file_bytes;
    for size in [256usize, 4096, 16384] {
        let setup = NicfsSetup { log_bytes: s.log_bytes, file_bytes: bytes, ..NicfsSetup::default() };
        let m = NicfsMachine::new(cfg, &setup)?;
        let nicfs = four(|p| m.run(p, seed), || m.settle(), size, bytes)?;
        let kernel = |kind| {
            let k = KernelMachine::new(cfg, kind, 1, bytes);
            four(|p| k.run(p, seed), || Ok(()), size, bytes)
        };
        let (dax_sync, dax_default, ext4) =
            (kernel(Kind::Dax)?, kernel(Kind::DaxDefault)?, kernel(Kind::PageCache)?);
        let lib = InPlaceMachine::new(cfg, 1, bytes)?;
        let inplace = four(|p| lib.run(p, seed), || Ok(()), size, bytes)?;
        for (i, phase) in PHASE_NAMES.iter().enumerate() {
            out.push(Throughput {
                size,
                phase,
                nicfs: nicfs[i],
                dax_sync: dax_sync[i],
                dax_default: dax_default[i],
                ext4: ext4[i],
                inplace: inplace[i],
            });
        }
    }
    Ok(out)
}

/// Figure 1 as a markdown table.
pub fn render_throughput(t: &[Throughput]) -> String {
    let mut out = String::from(
        "| size | call | nicfs | ext4-dax (O_DSYNC) | ext4-dax (default mount) | ext4 (fdatasync) | in-place library | nicfs / ext4-dax: O_DSYNC, default (published) | nicfs / ext4 (published) |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in t {
        let (p_dax, p_ext4) = r.published();
        out.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2}, {:.2} ({p_dax}) | {:.2} ({p_ext4}) |\n",
            r.size,
            r.phase,
            r.nicfs,
            r.dax_sync,
            r.dax_default,
            r.ext4,
            r.inplace,
            r.nicfs / r.dax_sync,
            r.nicfs / r.dax_default,
            r.nicfs / r.ext4
        ));
    }
    out.push_str("\n(thousands of calls per second, one process; published ratios from PRESETS.md, NICFS)\n");
    out
}

/// Figure 1's comparisons with the published ratios, as rows: at 256 B against Ext4-DAX
/// (both variants) and Ext4, at 4 and 16 KiB against Ext4.
pub fn throughput_rows(t: &[Throughput]) -> Vec<Row> {
    let mut rows = Vec::new();
    for r in t {
        let (p_dax, p_ext4) = r.published();
        if r.size == 256 {
            for (name, base) in
                [("ext4-dax (O_DSYNC)", r.dax_sync), ("ext4-dax (default mount)", r.dax_default)]
            {
                let ratio = r.nicfs / base;
                rows.push(Row {
                    figure: "1 throughput",
                    measure: format!("{} B {}: nicfs / {name}", r.size, r.phase),
                    values: format!("nicfs {:.0}, {name} {base:.0} kops/s", r.nicfs),
                    ratio,
                    published: p_dax.into(),
                    same_direction: ratio > 1.0,
                });
            }
        }
        let ratio = r.nicfs / r.ext4;
        rows.push(Row {
            figure: "1 throughput",
            measure: format!("{} B {}: nicfs / ext4 (fdatasync)", r.size, r.phase),
            values: format!("nicfs {:.0}, ext4 {:.0} kops/s", r.nicfs, r.ext4),
            ratio,
            published: p_ext4.into(),
            same_direction: ratio > 1.0,
        });
    }
    rows
}

/// Drain measurement on a fresh machine: (front ends logging, back end applying).
fn drain(
    cfg: &TimedConfig,
    s: &Scale,
    fronts: usize,
    pattern: Pattern,
    file_bytes: u64,
    tweak: impl FnOnce(&mut NicfsSetup),
    seed: u64,
) -> Result<(PhaseResult, PhaseResult), String> {
    let mut setup =
        NicfsSetup { fronts, log_bytes: s.drain_bytes + (1 << 20), file_bytes, ..NicfsSetup::default() };
    tweak(&mut setup);
    let m = NicfsMachine::new(cfg, &setup)?;
    m.run_split(&phase(Access::Write, pattern, 4096, s.drain_bytes), seed)
}

/// Figures 2-5.
pub fn backend(cfg: &TimedConfig, s: &Scale, seed: u64) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let (fe, be) = drain(cfg, s, 1, Pattern::Seq, s.drain_bytes, |_| {}, seed)?;
    let r = be.mbps() / fe.mbps();
    rows.push(Row {
        figure: "2 back end vs front end",
        measure: "4 KiB appends, 1 front end: back-end drain / front-end logging".into(),
        values: format!(
            "front end {:.0} MB/s, back end {:.0} MB/s (busiest NIC core {:.0} %)",
            fe.mbps(),
            be.mbps(),
            be.busiest("nic") * 100.0
        ),
        ratio: r,
        published: "slightly above 1".into(),
        same_direction: r >= 1.0,
    });
    let mut base = 0.0;
    let mut two = 0.0;
    for fronts in [1usize, 2, 4] {
        let setup =
            NicfsSetup { fronts, log_bytes: s.log_bytes, file_bytes: s.file_bytes, ..NicfsSetup::default() };
        let m = NicfsMachine::new(cfg, &setup)?;
        let res = m.run(&phase(Access::Write, Pattern::Seq, 4096, s.file_bytes), seed)?;
        let mbps = res.mbps();
        if fronts == 1 {
            base = mbps;
            continue;
        }
        let r = mbps / base;
        let (published, same) = if fronts == 2 {
            two = r;
            ("2 (x2)", r > 1.5)
        } else {
            ("below the two-front-end value (NIC core shortage)", r < two)
        };
        rows.push(Row {
            figure: "3 front ends",
            measure: format!("4 KiB appends, sustained: {fronts} front ends / 1"),
            values: format!(
                "1: {base:.0} MB/s, {fronts}: {mbps:.0} MB/s (busiest NIC core {:.0} %; {})",
                res.busiest("nic") * 100.0,
                if fronts == 2 {
                    let lock = match cfg.nic.patch_lock {
                        PatchLock::Engine => "engine",
                        PatchLock::PerPipeline => "per_pipeline",
                    };
                    format!("patch_lock {lock}")
                } else {
                    format!(
                        "{} threads on {} cores, switch_ns {}",
                        4 * fronts,
                        cfg.nic.cores,
                        cfg.nic.switch_ns
                    )
                }
            ),
            ratio: r,
            published: published.into(),
            same_direction: same,
        });
    }
    // Index lookups matter when the file needs indirect blocks: random offsets over 64 MiB.
    let big = 64 << 20;
    let (_, with) = drain(cfg, s, 1, Pattern::Rand, big, |_| {}, seed)?;
    let (_, without) = drain(cfg, s, 1, Pattern::Rand, big, |st| st.index_cache_lines = 0, seed)?;
    let r = without.mbps() / with.mbps();
    rows.push(Row {
        figure: "4 index-block cache",
        measure: "4 KiB random writes, back-end drain: without cache / with".into(),
        values: format!("with {:.0} MB/s, without {:.0} MB/s", with.mbps(), without.mbps()),
        ratio: r,
        published: "well below 1 (\"throughput slumps\")".into(),
        same_direction: r < 0.9,
    });
    let (piped, serial) = pipeline_drain(cfg, s, seed)?;
    let r = serial / piped;
    rows.push(Row {
        figure: "5 pipeline",
        measure: "4 KiB appends, back-end drain: without pipeline / with".into(),
        values: format!("with {piped:.0} MB/s, without {serial:.0} MB/s"),
        ratio: r,
        published: "<= 0.5".into(),
        same_direction: r <= 0.75,
    });
    Ok(rows)
}

/// The fewest bytes figure 5 drains: a pipeline overlaps batches (256 records each), so a
/// drain of one or two batches (the small scale's 1 MiB) cannot show what it gains.
const PIPELINE_DRAIN_BYTES: u64 = 8 << 20;

/// Figure 5's drain of 4 KiB appends with and without the pipeline, MB/s.
fn pipeline_drain(cfg: &TimedConfig, s: &Scale, seed: u64) -> Result<(f64, f64), String> {
    let s = &Scale { drain_bytes: s.drain_bytes.max(PIPELINE_DRAIN_BYTES), ..*s };
    let (_, piped) = drain(cfg, s, 1, Pattern::Seq, s.drain_bytes, |_| {}, seed)?;
    let (_, serial) = drain(cfg, s, 1, Pattern::Seq, s.drain_bytes, |st| st.pipeline = false, seed)?;
    Ok((piped.mbps(), serial.mbps()))
}

/// Where figure 5's published shape holds (without the pipeline the back end drains at most
/// half as fast), from [`pipeline_map`]: without over with, by Patch's cost per record and the
/// NIC core's speed, neither stated by the paper.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineMap {
    /// The other three stages' cycles per record (fetch + locate + merge).
    pub others: u64,
    /// Per `cpu.patch_record` ([`MAP_PATCH_RECORD`]): without / with the pipeline at each NIC
    /// speed of [`MAP_PIPELINE_SPEED`].
    pub by_patch: Vec<(u64, Vec<f64>)>,
}

/// The Patch costs per record (cycles) the pipeline map runs: the calibrated default (1,650)
/// down to below the other stages' each.
pub const MAP_PATCH_RECORD: [u64; 5] = [1650, 800, 400, 200, 100];
/// The NIC core speeds (NIC cycles per host cycle) the pipeline map runs: up to slower than
/// the front-end map's, where the stages' work rather than DMA sets the pace.
pub const MAP_PIPELINE_SPEED: [f64; 4] = [1.0, 2.0, 4.0, 8.0];

/// Maps figure 5 (the pipeline's gain) against Patch's cost per record and the NIC core's
/// speed; `cfg` gives everything else.
pub fn pipeline_map(cfg: &TimedConfig, s: &Scale, seed: u64) -> Result<PipelineMap, String> {
    let mut by_patch = Vec::new();
    for patch in MAP_PATCH_RECORD {
        let mut ratios = Vec::new();
        for speed in MAP_PIPELINE_SPEED {
            let mut c = cfg.clone();
            c.cpu.patch_record = patch;
            c.nic.cycles_per_host_cycle = speed;
            let (piped, serial) = pipeline_drain(&c, s, seed)?;
            ratios.push(serial / piped);
        }
        by_patch.push((patch, ratios));
    }
    let cpu = &cfg.cpu;
    Ok(PipelineMap { others: cpu.fetch_record + cpu.locate_record + cpu.merge_record, by_patch })
}

impl PipelineMap {
    /// The map as a Markdown table.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!(
            "Back-end drain of 4 KiB appends, without the pipeline over with (published: <= 0.5), by \
             Patch's cycles per record (the other three stages: {} together) and NIC speed.\n\n\
             | `cpu.patch_record` |",
            self.others
        );
        for speed in MAP_PIPELINE_SPEED {
            let _ = write!(out, " speed {speed:.1} |");
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(MAP_PIPELINE_SPEED.len()));
        for (patch, ratios) in &self.by_patch {
            let _ = write!(out, "\n| {patch} |");
            for r in ratios {
                let _ = write!(out, " {r:.2} |");
            }
        }
        out.push('\n');
        out
    }
}

/// Where figure 3's two published shapes hold (two front ends x2; four below two), from
/// [`front_end_map`]: sustained 4 KiB appends, throughput over one front end's.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontEndMap {
    /// The configuration's NIC speed (NIC cycles per host cycle) of the switch row.
    pub speed: f64,
    /// Two front ends over one, at the configuration's switch cost and speed.
    pub two: f64,
    /// Four front ends over one, by `nic.switch_ns` ([`MAP_SWITCH_NS`]).
    pub by_switch: Vec<(u64, f64)>,
    /// By NIC speed ([`MAP_NIC_SPEED`]): two over one, and four over one at each of
    /// [`MAP_SPEED_SWITCH_NS`].
    pub by_speed: Vec<(f64, f64, Vec<f64>)>,
}

/// The NIC context-switch costs the front-end map runs, ns.
pub const MAP_SWITCH_NS: [u64; 10] = [0, 1_000, 3_800, 7_600, 9_000, 11_000, 12_000, 13_000, 15_000, 30_000];
/// The NIC core speeds (NIC cycles per host cycle) the front-end map runs.
pub const MAP_NIC_SPEED: [f64; 4] = [1.0, 2.0, 3.0, 4.0];
/// The switch costs of the speed table's columns, ns.
pub const MAP_SPEED_SWITCH_NS: [u64; 3] = [0, 3_800, 15_000];

/// Sustained 4 KiB appends with `fronts` front ends, MB/s (figure 3's runs).
fn fronts_mbps(cfg: &TimedConfig, s: &Scale, fronts: usize, seed: u64) -> Result<f64, String> {
    let setup =
        NicfsSetup { fronts, log_bytes: s.log_bytes, file_bytes: s.file_bytes, ..NicfsSetup::default() };
    let m = NicfsMachine::new(cfg, &setup)?;
    Ok(m.run(&phase(Access::Write, Pattern::Seq, 4096, s.file_bytes), seed)?.mbps())
}

/// Maps figure 3's shapes against the two NIC parameters the paper does not state: the
/// context-switch cost (`nic.switch_ns`) and the core speed (`nic.cycles_per_host_cycle`);
/// `cfg` gives everything else.
pub fn front_end_map(cfg: &TimedConfig, s: &Scale, seed: u64) -> Result<FrontEndMap, String> {
    let ratio = |c: &TimedConfig, fronts: usize| -> Result<f64, String> {
        Ok(fronts_mbps(c, s, fronts, seed)? / fronts_mbps(c, s, 1, seed)?)
    };
    let mut by_switch = Vec::new();
    for ns in MAP_SWITCH_NS {
        let mut c = cfg.clone();
        c.nic.switch_ns = ns;
        by_switch.push((ns, ratio(&c, 4)?));
    }
    let mut by_speed = Vec::new();
    for speed in MAP_NIC_SPEED {
        let mut c = cfg.clone();
        c.nic.cycles_per_host_cycle = speed;
        let two = ratio(&c, 2)?;
        let mut four = Vec::new();
        for ns in MAP_SPEED_SWITCH_NS {
            c.nic.switch_ns = ns;
            four.push(ratio(&c, 4)?);
        }
        by_speed.push((speed, two, four));
    }
    Ok(FrontEndMap { speed: cfg.nic.cycles_per_host_cycle, two: ratio(cfg, 2)?, by_switch, by_speed })
}

impl FrontEndMap {
    /// The map as two Markdown tables.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!(
            "Sustained 4 KiB appends, throughput over one front end's, at `nic.cycles_per_host_cycle` {} \
             (published: two front ends x2, four below two).\n\n| `switch_ns` |",
            self.speed
        );
        for (ns, _) in &self.by_switch {
            let _ = write!(out, " {ns} |");
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(self.by_switch.len()));
        let _ = write!(out, "\n| 4 front ends / 1 (2 front ends: {:.2}) |", self.two);
        for (_, r) in &self.by_switch {
            let _ = write!(out, " {r:.2} |");
        }
        out.push_str("\n\n| NIC cycles per host cycle | 2 front ends / 1 |");
        for ns in MAP_SPEED_SWITCH_NS {
            let _ = write!(out, " 4 / 1, switch {} us |", ns as f64 / 1e3);
        }
        out.push_str("\n|---|---|");
        out.push_str(&"---|".repeat(MAP_SPEED_SWITCH_NS.len()));
        for (speed, two, four) in &self.by_speed {
            let _ = write!(out, "\n| {speed:.1} | {two:.2} |");
            for r in four {
                let _ = write!(out, " {r:.2} |");
            }
        }
        out.push('\n');
        out
    }
}

/// Every figure: the throughput table, and every comparison as rows (figure 1's first).
pub fn paper(cfg: &TimedConfig, s: &Scale, seed: u64) -> Result<(Vec<Throughput>, Vec<Row>), String> {
    let t = throughput(cfg, s, seed)?;
    let mut rows = throughput_rows(&t);
    rows.extend(backend(cfg, s, seed)?);
    Ok((t, rows))
}

/// The rows as a markdown table.
pub fn render(rows: &[Row]) -> String {
    let mut out = String::from(
        "| figure | measure | model | ratio | published | same direction |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {} | {} |\n",
            r.figure,
            r.measure,
            r.values,
            r.ratio,
            r.published,
            if r.same_direction { "yes" } else { "no" }
        ));
    }
    out
}
