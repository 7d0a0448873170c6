//! What `ssdlab figure pipessd` prints and draws from its cells: the throughput table with
//! hit ratios and the lock share of the tail, the open-loop table, the charts, and the rows of
//! the fidelity table.

use std::fmt::Write as _;

use anyhow::Result;

use super::{ARCHS, Cell, OpenCell, REGIONS, SETUPS, financial_options};
use crate::cli::PipessdFigureArgs;
use crate::commands::figure::lab::{Row, Verdict};

fn find<'a>(cells: &'a [Cell], setup: &str, workload: &str, arch: &str) -> Option<&'a Cell> {
    cells.iter().find(|c| c.setup == setup && c.workload == workload && c.arch == arch)
}

/// The printed table: throughput against Tradition-4, hit ratios, the lock share of the tail.
pub(super) fn table(cells: &[Cell], a: &PipessdFigureArgs) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "PipeSSD comparison: {} device, {} blocks per plane, closed loop at depth {}, seed {}, {}",
        a.preset,
        a.blocks,
        a.depth,
        a.seed,
        match a.requests_per_thread {
            Some(n) => format!("{n} request(s) per Tradition thread"),
            None => "the preset's requests per Tradition thread".into(),
        }
    );
    let _ = writeln!(s, "Financial-like job: {}", financial_options(a).1);
    let _ = writeln!(
        s,
        "\nthroughput against Tradition-4 (Tradition-4's own IOPS first); beside it, Tradition-4's \
         lock-wait share of latency and channel utilisation, and PipeSSD's channel utilisation"
    );
    let _ = writeln!(
        s,
        "{:<24} {:<15} {:>14} {:>9} {:>10} {:>12} {:>9} {:>9} {:>9}",
        "setup",
        "workload",
        "Tradition-4",
        "PipeSSD",
        "DeepFlash",
        "Tradition-8",
        "T-4 lock",
        "T-4 chan",
        "P chan"
    );
    for ((setup, published), region) in SETUPS.into_iter().zip(REGIONS) {
        let rows: Vec<&Cell> = cells.iter().filter(|c| c.setup == setup && c.arch == "Tradition-4").collect();
        if rows.is_empty() {
            continue;
        }
        let mut sums = [0.0; 3];
        for base in &rows {
            let _ = write!(s, "{setup:<24} {:<15} {:>14}", base.workload, report::grouped(base.iops));
            for (i, arch) in ["PipeSSD", "DeepFlash", "Tradition-8"].into_iter().enumerate() {
                let r = find(cells, setup, &base.workload, arch)
                    .map_or(f64::NAN, |c| c.iops / base.iops.max(1e-9));
                sums[i] += r;
                let _ = write!(s, " {:>8.2}x", r);
            }
            let pipe_chan =
                find(cells, setup, &base.workload, "PipeSSD").map_or(f64::NAN, |c| c.channel_busy);
            let _ = writeln!(
                s,
                " {:>8.1}% {:>8.1}% {:>8.1}%",
                base.lock_share * 100.0,
                base.channel_busy * 100.0,
                pipe_chan * 100.0
            );
        }
        let n = rows.len() as f64;
        let _ = writeln!(
            s,
            "{setup:<24} {:<15} {:>14} {:>8.2}x {:>9.2}x {:>11.2}x   published for PipeSSD: {published}",
            "mean",
            "",
            sums[0] / n,
            sums[1] / n,
            sums[2] / n
        );
        let _ = writeln!(s, "{:<40} {region}", "");
    }
    let _ = writeln!(s, "published: Tradition-8 barely better than Tradition-4");
    let first = SETUPS[0].0;
    if cells.iter().all(|c| c.setup != first) {
        return s;
    }
    let _ = writeln!(s, "\ndata cache hit ratio ({first})");
    let _ = writeln!(
        s,
        "{:<15} {:>9} {:>12} {:>10}   published",
        "workload", "PipeSSD", "Tradition-4", "DeepFlash"
    );
    for workload in ["WebSearch", "TPC-C", "MSR hm_0", "Financial-like"] {
        let hit = |arch| find(cells, first, workload, arch).map_or(f64::NAN, |c| c.cache_hit_ratio * 100.0);
        let published = match workload {
            "WebSearch" => "WebSearch1/2/3: 1.08% / 0.03% / 0.06% (PipeSSD = Tradition)",
            "Financial-like" => "Financial1/2: 50.19% / 51.03%; DeepFlash 44.22% / 46.17%",
            _ => "-",
        };
        let _ = writeln!(
            s,
            "{workload:<15} {:>8.2}% {:>11.2}% {:>9.2}%   {published}",
            hit("PipeSSD"),
            hit("Tradition-4"),
            hit("DeepFlash")
        );
    }
    let _ = writeln!(
        s,
        "\nlock share of Tradition-4's tail latency (the slowest 1% of commands; published: > 50%)"
    );
    for c in cells.iter().filter(|c| c.setup == first && c.arch == "Tradition-4") {
        let _ = writeln!(
            s,
            "{:<15} {:>6.1}%   (p99 latency {:.0} us)",
            c.workload,
            c.lock_share_of_tail * 100.0,
            c.p99_latency_us
        );
    }
    s
}

/// The open-loop table: per setup, trace and offered rate, what Tradition-4 completed and
/// PipeSSD's throughput and mean latency against it, with the mechanism beside them.
pub(super) fn open_table(open: &[OpenCell], a: &PipessdFigureArgs) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nopen loop (records issued at a fixed rate, as the paper's preloaded traces): offered as a share \
         of the saturation rate (the most records per second a design completed closed loop at depth {}); \
         published for PipeSSD over Tradition-4: see above",
        a.depth
    );
    let _ = writeln!(
        s,
        "{:<24} {:<11} {:>7} {:>10} {:>12} {:>8} {:>12} {:>8} {:>9} {:>9} {:>9}",
        "setup",
        "workload",
        "offered",
        "rate",
        "Tradition-4",
        "PipeSSD",
        "T-4 lat us",
        "P lat",
        "T-4 lock",
        "T-4 chan",
        "P chan"
    );
    for t in open.iter().filter(|o| o.cell.arch == "Tradition-4") {
        let p = open.iter().find(|o| {
            o.cell.arch == "PipeSSD"
                && o.cell.setup == t.cell.setup
                && o.cell.workload == t.cell.workload
                && o.offered_pct == t.offered_pct
        });
        let (b, p) = (&t.cell, p.map(|o| &o.cell));
        let _ = writeln!(
            s,
            "{:<24} {:<11} {:>6}% {:>10} {:>12} {:>7.2}x {:>12.0} {:>7.2}x {:>8.1}% {:>8.1}% {:>8.1}%",
            b.setup,
            b.workload,
            t.offered_pct,
            report::grouped(b.offered_iops),
            report::grouped(b.iops),
            p.map_or(f64::NAN, |p| p.iops / b.iops.max(1e-9)),
            b.mean_latency_us,
            p.map_or(f64::NAN, |p| p.mean_latency_us / b.mean_latency_us.max(1e-9)),
            b.lock_share * 100.0,
            b.channel_busy * 100.0,
            p.map_or(f64::NAN, |p| p.channel_busy * 100.0)
        );
    }
    s
}

/// A bar chart per setup: each design's throughput against Tradition-4, per workload.
pub(super) fn charts(cells: &[Cell], a: &PipessdFigureArgs) -> Result<Vec<std::path::PathBuf>> {
    let workloads = ["WebSearch", "TPC-C", "MSR hm_0", "Financial-like"];
    let mut out = Vec::new();
    for (i, (setup, published)) in SETUPS.iter().enumerate() {
        if !cells.iter().any(|c| c.setup == *setup) {
            continue;
        }
        let series = ARCHS
            .iter()
            .map(|(arch, _)| plot::Series {
                name: arch.to_string(),
                points: workloads
                    .iter()
                    .enumerate()
                    .filter_map(|(x, w)| {
                        let base = find(cells, setup, w, "Tradition-4")?;
                        let r = find(cells, setup, w, arch)?.iops / base.iops.max(1e-9);
                        Some(plot::Point { x: x as f64, mean: r, lo: r, hi: r })
                    })
                    .collect(),
            })
            .collect();
        let chart = plot::Chart {
            title: format!("PipeSSD comparison, {setup}"),
            subtitle: format!("throughput against Tradition-4; published for PipeSSD: {published}"),
            x_desc: "workload".into(),
            y_desc: "IOPS / Tradition-4's".into(),
            categories: Some(workloads.iter().map(|w| w.to_string()).collect()),
            series,
            log_y: false,
        };
        let path = a.out.join(format!("throughput-{i}.png"));
        out.push(plot::write_chart(&chart, &path)?);
    }
    Ok(out)
}

/// The published comparisons as judged rows (the fidelity table's PipeSSD part): for each
/// setup run, PipeSSD's mean throughput over Tradition-4's and DeepFlash's, Tradition-8's over
/// Tradition-4's, WebSearch alone, and on the first setup the hit ratios and Tradition-4's
/// lock share of the tail. The Financial traces are not shared: a job stands in (FINANCIAL),
/// and the rows say so.
pub fn rows(cells: &[Cell]) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row =
        |figure: &str, metric: String, measured: String, published: &str, note: String, v: Verdict| {
            rows.push(Row {
                figure: figure.into(),
                metric,
                measured,
                published: published.into(),
                note,
                verdict: Some(v),
            });
        };
    // The mean over the setup's workloads of `arch`'s IOPS over `base`'s.
    let mean_ratio = |setup: &str, arch: &str, base: &str| {
        let r: Vec<f64> = cells
            .iter()
            .filter(|c| c.setup == setup && c.arch == base)
            .filter_map(|b| Some(find(cells, setup, &b.workload, arch)?.iops / b.iops.max(1e-9)))
            .collect();
        r.iter().sum::<f64>() / r.len().max(1) as f64
    };
    let workloads = "WebSearch, TPC-C, MSR hm_0 (shared samples) and a Financial-like job (stand-in)";
    for (setup, _) in SETUPS {
        if !cells.iter().any(|c| c.setup == setup) {
            continue;
        }
        let (published, p) = match setup {
            "4 channels" => ("+31.2% on average", 0.312),
            "8 channels" => ("about +40%", 0.40),
            _ => ("+42%", 0.42),
        };
        let r = mean_ratio(setup, "PipeSSD", "Tradition-4");
        row(
            "PipeSSD vs Tradition-4",
            format!("{setup}: PipeSSD throughput over Tradition-4's, mean of 4 workloads"),
            format!("{:+.1}%", (r - 1.0) * 100.0),
            published,
            workloads.into(),
            Verdict::ratio(r, 1.0 + p),
        );
        if setup != "4 channels, half cache" {
            let p = if setup == "4 channels" { 0.05 } else { 0.052 };
            let r = mean_ratio(setup, "PipeSSD", "DeepFlash");
            row(
                "PipeSSD vs DeepFlash",
                format!("{setup}: PipeSSD throughput over DeepFlash's, mean"),
                format!("{:+.1}%", (r - 1.0) * 100.0),
                if setup == "4 channels" { "+5%" } else { "+5.2%" },
                workloads.into(),
                Verdict::ratio(r, 1.0 + p),
            );
        }
        if setup == "4 channels" {
            let ws = |arch| find(cells, setup, "WebSearch", arch).map_or(f64::NAN, |c| c.iops);
            let r = ws("PipeSSD") / ws("Tradition-4");
            row(
                "PipeSSD vs Tradition-4",
                "4 channels: WebSearch (low locality), PipeSSD over Tradition-4".into(),
                format!("{:+.1}%", (r - 1.0) * 100.0),
                "+36%",
                "the shared WebSearch sample (one of the paper's three WebSearch traces)".into(),
                Verdict::ratio(r, 1.36),
            );
            let r = mean_ratio(setup, "Tradition-8", "Tradition-4");
            row(
                "Tradition-8 vs Tradition-4",
                "4 channels: Tradition-8 throughput over Tradition-4's, mean".into(),
                format!("{:+.1}%", (r - 1.0) * 100.0),
                "barely better",
                "\"barely better\": 0 to +10%".into(),
                Verdict::shape((1.0..=1.10).contains(&r)),
            );
            let hit = |w, arch| find(cells, setup, w, arch).map_or(f64::NAN, |c| c.cache_hit_ratio * 100.0);
            row(
                "data cache hit ratio",
                "WebSearch, PipeSSD".into(),
                format!("{:.2}%", hit("WebSearch", "PipeSSD")),
                "1.08% / 0.03% / 0.06% (WebSearch1/2/3)",
                "the shared WebSearch sample".into(),
                Verdict::near(hit("WebSearch", "PipeSSD"), 0.03, 1.08),
            );
            row(
                "data cache hit ratio",
                "Financial-like job (stand-in), PipeSSD".into(),
                format!("{:.2}%", hit("Financial-like", "PipeSSD")),
                "50.19% / 51.03% (Financial1/2)",
                "a stand-in job, not the Financial traces: its locality is an assumption".into(),
                Verdict::near(hit("Financial-like", "PipeSSD"), 50.19, 51.03),
            );
            let (df, ps) = (hit("Financial-like", "DeepFlash"), hit("Financial-like", "PipeSSD"));
            row(
                "data cache hit ratio",
                "Financial-like job (stand-in): DeepFlash's below PipeSSD's".into(),
                format!("{df:.2}% vs {ps:.2}%"),
                "44.22% vs 50.19% (bypasses an occupied cache)",
                "a stand-in job".into(),
                Verdict::shape(df < ps),
            );
            let shares: Vec<f64> = cells
                .iter()
                .filter(|c| c.setup == setup && c.arch == "Tradition-4")
                .map(|c| c.lock_share_of_tail)
                .collect();
            let mean = shares.iter().sum::<f64>() / shares.len().max(1) as f64;
            row(
                "lock contention",
                "lock share of Tradition-4's slowest 1% of commands, mean".into(),
                format!("{:.1}%", mean * 100.0),
                "> 50%",
                "cache-line lock waits over the latency of the slowest 1%".into(),
                Verdict::within(mean, 0.5, 1.0),
            );
        }
    }
    rows
}
