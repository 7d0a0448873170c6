//! `ssdlab figure gc-theory`: steady-state write amplification of uniform random 4 KiB writes
//! beside the analytic models of cleaning (issue 27 item 5; docs/gc-theory.md), then DFTL's
//! extra write amplification as the CMT grows to the full map. The measuring is
//! `ssdlab::gc_theory`'s; this module runs the points and prints, saves and draws them.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Result, ensure};
use firmware::ftl::VictimPolicy;
use firmware::ftl::theory;
use ssdlab::gc_theory::{Measured, SEGMENT, Setup, measure};

use crate::cli::GcTheoryArgs;

/// MQSim's default CMT (2 MiB of 8-byte entries) over the map of its default 512 GiB device
/// (128 Mi entries): the share of the map the smallest DFTL point caches.
const MQSIM_COVERAGE: f64 = 1.0 / 512.0;

struct Point {
    m: Measured,
    secs: f64,
}

fn point(what: &str, s: &Setup) -> Result<Point> {
    let t = Instant::now();
    let m = measure(s)?;
    let secs = t.elapsed().as_secs_f64();
    eprintln!("gc-theory: {what}: WAF {:.3} ({secs:.1}s)", m.waf);
    Ok(Point { m, secs })
}

pub fn run(a: &GcTheoryArgs) -> Result<()> {
    ensure!(a.pages >= 2, "--pages must be at least 2 (got {})", a.pages);
    // 7% of 128 blocks still leaves GC its soft_free + 2 spare blocks.
    ensure!(a.blocks >= 128, "--blocks must be at least 128 (got {})", a.blocks);
    ensure!(a.dftl_op > 0.0 && a.dftl_op < 1.0, "--dftl-op must be between 0 and 1 (got {})", a.dftl_op);
    let started = Instant::now();
    let (blocks, pages) = if a.quick { (256, 64) } else { (a.blocks, a.pages) };
    let ops: &[f64] = if a.quick { &[0.12, 0.28] } else { &[0.07, 0.12, 0.20, 0.28, 0.50] };
    let pacing: &'static str = if a.pacing == "paced" { "paced" } else { "eager" };
    let other: &'static str = if pacing == "paced" { "eager" } else { "paced" };
    let policies = [VictimPolicy::Greedy, VictimPolicy::Fifo, VictimPolicy::CostBenefit];

    let mut sweep = Vec::new();
    for &op in ops {
        for v in policies {
            let s = Setup { pacing, ..Setup::new(blocks, pages, op, v, a.seed) };
            sweep.push(point(&format!("{} at op {op}", ssdlab::gc_theory::victim_name(v)), &s)?);
        }
    }
    let mut pacing_check = Vec::new();
    for &op in [ops[0], ops[ops.len() - 1]].iter() {
        for v in [VictimPolicy::Greedy, VictimPolicy::Fifo] {
            let s = Setup { pacing: other, ..Setup::new(blocks, pages, op, v, a.seed) };
            let what = format!("{} at op {op}, {other}", ssdlab::gc_theory::victim_name(v));
            pacing_check.push(point(&what, &s)?);
        }
    }
    let mut dftl = Vec::new();
    let full = point(
        &format!("greedy at op {}, full map", a.dftl_op),
        &Setup { pacing, ..Setup::new(blocks, pages, a.dftl_op, VictimPolicy::Greedy, a.seed) },
    )?;
    let coverages: &[f64] =
        if a.quick { &[1.0 / 8.0, 1.0] } else { &[MQSIM_COVERAGE, 1.0 / 64.0, 1.0 / 8.0, 0.5, 1.0] };
    for &c in coverages {
        let s = Setup {
            pacing,
            cmt_coverage: Some(c),
            ..Setup::new(blocks, pages, a.dftl_op, VictimPolicy::Greedy, a.seed)
        };
        dftl.push(point(&format!("DFTL, CMT {:.4} of the map", c), &s)?);
    }

    let mut t = String::new();
    sweep_table(&mut t, blocks, pages, pacing, &sweep);
    let _ = writeln!(t, "\npacing check ({other} instead of {pacing}):");
    sweep_table(&mut t, blocks, pages, other, &pacing_check);
    dftl_table(&mut t, &full, &dftl);
    let _ = write!(
        t,
        "\ngc-theory: {} points in {:.0}s{}",
        sweep.len() + pacing_check.len() + dftl.len() + 1,
        started.elapsed().as_secs_f64(),
        if a.quick { " (--quick: a smoke test, not the figure)" } else { "" }
    );
    println!("{t}");
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
        std::fs::write(dir.join("table.txt"), &t)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", dir.join("table.txt").display()))?;
        let all: Vec<&Measured> = sweep
            .iter()
            .chain(&pacing_check)
            .chain(std::iter::once(&full))
            .chain(&dftl)
            .map(|p| &p.m)
            .collect();
        super::super::write_json(&dir.join("points.json"), &all)?;
        for ext in ["png", "svg"] {
            plot::write_chart(&waf_chart(&sweep, blocks, pages), &dir.join(format!("waf-by-op.{ext}")))?;
            plot::write_chart(&dftl_chart(&full, &dftl), &dir.join(format!("dftl.{ext}")))?;
        }
        eprintln!("tables, points and charts in {}", dir.display());
    }
    Ok(())
}

fn sweep_table(t: &mut String, blocks: u32, pages: u32, pacing: &str, points: &[Point]) {
    let _ = writeln!(
        t,
        "uniform random 4 KiB writes, full page map, 1 plane of {blocks} blocks x {pages} pages of 4 KiB, GC {pacing}"
    );
    let _ = writeln!(
        t,
        "op = spare/raw (ftl.op); rho = spare/logical; F = mean free blocks; alpha = (N - F - open) b / (U - open b/2)"
    );
    let _ = writeln!(
        t,
        "{:>5} {:>6} {:<12} {:>5} {:>7} {:>15} {:>8} {:>7} {:>10} {:>10} {:>15} {:>5}",
        "op",
        "rho",
        "policy",
        "F",
        "alpha",
        "WAF (windows)",
        "model",
        "dev",
        "LRW(alpha)",
        "LRW(op)",
        "victim valid",
        "secs"
    );
    for p in points {
        let m = &p.m;
        let w: Vec<String> = m.window_waf.iter().map(|w| format!("{w:.2}")).collect();
        let model_name = if m.victim == "fifo" { "" } else { "g:" };
        let _ = writeln!(
            t,
            "{:>5.2} {:>6.3} {:<12} {:>5.1} {:>7.4} {:>6.3} ({:>6}) {:>2}{:>6.3} {:>+6.1}% {:>10.3} {:>10.3} {:>6.3} / {:>6.3} {:>5.0}",
            m.op,
            m.op / (1.0 - m.op),
            m.victim,
            m.mean_free_blocks,
            m.alpha,
            m.waf,
            w.join("/"),
            model_name,
            m.model(),
            m.deviation() * 100.0,
            m.lrw_model(),
            m.lrw_nominal(),
            m.victim_valid,
            m.greedy_model_valid(),
            p.secs
        );
    }
    let _ = writeln!(
        t,
        "model: greedy and cost-benefit (g:) against greedy's mean-field model with b = {pages}; fifo against Desnoyers' LRW\n\
         closed form at the accounted alpha. LRW(op): the closed form at the nominal op, no free or open blocks.\n\
         victim valid: measured mean (units moved / victims / b) / greedy's model."
    );
}

fn dftl_table(t: &mut String, full: &Point, dftl: &[Point]) {
    let f = &full.m;
    let _ = writeln!(
        t,
        "\nDFTL (greedy, op {:.2}, segments of {SEGMENT} entries, 1024 entries per translation page): full map WAF {:.3} (model {:.3})",
        f.op,
        f.waf,
        f.greedy_model()
    );
    let _ = writeln!(
        t,
        "{:>8} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>5}",
        "CMT",
        "WAF",
        "extra",
        "GC/host",
        "miss/host",
        "model",
        "map/host",
        "evict mdl",
        "moves/page",
        "(1+w)g",
        "alpha",
        "secs"
    );
    let siblings = 1024 / SEGMENT;
    for p in dftl {
        let m = &p.m;
        let c = m.cmt_share;
        let q = theory::dftl_dirty_evicted(c, siblings);
        // Translation pages beyond the evictions: none to speak of once the flusher batches
        // (the budget for pending updates), and then no ratio to show.
        let beyond = m.mapping_per_host - (1.0 - c) * q;
        let moves = match beyond > 0.01 {
            true => format!("{:.2}", m.gc_per_host * (1.0 - c) / beyond),
            false => "-".to_string(),
        };
        let _ = writeln!(
            t,
            "{:>8} {:>7.3} {:>+7.3} {:>7.3} {:>9.4} {:>9.4} {:>9.4} {:>9.4} {:>10} {:>9.3} {:>9.4} {:>5.0}",
            coverage_label(m.cmt_coverage.unwrap_or(1.0)),
            m.waf,
            m.waf - f.waf,
            m.gc_per_host,
            m.cmt_misses_per_host,
            1.0 - c,
            m.mapping_per_host,
            (1.0 - c) * q,
            moves,
            (1.0 + m.mapping_per_host) * m.greedy_model(),
            m.alpha,
            p.secs
        );
    }
    let _ = writeln!(
        t,
        "miss/host: CMT misses per host unit (model 1 - coverage); map/host: translation pages programmed per host\n\
         unit (w); evict mdl: dirty evictions per host unit (ftl::theory::dftl_dirty_evicted); the rest of w is the\n\
         mapping flusher rewriting pages for units GC moved while uncached, and GC moving translation pages.\n\
         moves/page: GC moves of uncached entries (GC/host x (1 - coverage)) per page of w beyond the evictions (- if none), how\n\
         many moves a flusher rewrite batches. (1+w)g: greedy's model if a mapping page cost GC what a host page does.\n\
         The smallest CMT caches MQSim's share of the map (2 MiB over its 512 GiB device's 1 GiB map: 1/512)."
    );
}

fn coverage_label(c: f64) -> String {
    if c >= 1.0 { "full".into() } else { format!("1/{:.0}", 1.0 / c) }
}

fn waf_chart(points: &[Point], blocks: u32, pages: u32) -> plot::Chart {
    let mut series = Vec::new();
    for victim in ["greedy", "fifo", "cost-benefit"] {
        let of: Vec<&Measured> = points.iter().map(|p| &p.m).filter(|m| m.victim == victim).collect();
        let pts = |f: &dyn Fn(&Measured) -> f64| {
            of.iter().map(|m| plot::Point { x: m.op * 100.0, mean: f(m), lo: f(m), hi: f(m) }).collect()
        };
        series.push(plot::Series { name: format!("{victim} measured"), points: pts(&|m| m.waf) });
        if victim != "cost-benefit" {
            let name =
                if victim == "fifo" { "FIFO model (Desnoyers)" } else { "greedy model (mean field, b)" };
            series.push(plot::Series { name: name.into(), points: pts(&|m| m.model()) });
        }
    }
    plot::Chart {
        title: "Steady-state WAF, uniform random 4 KiB writes".into(),
        subtitle: format!("{blocks} blocks x {pages} pages, full page map; models at the accounted spare"),
        x_desc: "over-provisioning (ftl.op, % of raw)".into(),
        y_desc: "write amplification".into(),
        categories: None,
        series,
        log_y: false,
    }
}

fn dftl_chart(full: &Point, dftl: &[Point]) -> plot::Chart {
    let labels: Vec<String> = dftl.iter().map(|p| coverage_label(p.m.cmt_coverage.unwrap_or(1.0))).collect();
    let pts = |f: &dyn Fn(&Measured) -> f64| {
        dftl.iter()
            .enumerate()
            .map(|(i, p)| plot::Point { x: i as f64, mean: f(&p.m), lo: f(&p.m), hi: f(&p.m) })
            .collect()
    };
    plot::Chart {
        title: "DFTL's extra write amplification".into(),
        subtitle: format!("greedy, op {:.2}; full page map: WAF {:.3}", full.m.op, full.m.waf),
        x_desc: "CMT share of the map".into(),
        y_desc: "units programmed per host unit".into(),
        categories: Some(labels),
        series: vec![
            plot::Series { name: "total WAF".into(), points: pts(&|m| m.waf) },
            plot::Series { name: "GC".into(), points: pts(&|m| m.gc_per_host) },
            plot::Series { name: "translation pages".into(), points: pts(&|m| m.mapping_per_host) },
        ],
        log_y: false,
    }
}
