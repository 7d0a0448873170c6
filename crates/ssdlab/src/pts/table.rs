//! The PTS results as text: the rounds with the steady-state window marked, the IOPS table
//! (block size x R/W mix, averaged over the window) and the WSAT curve's summary.

use std::fmt::Write;

use super::PtsReport;
use super::plan::{BLOCK_SIZES, READ_PCTS, bs_label, mix_label};
use super::runner::{IopsResult, WsatResult};

/// The whole report as text.
pub fn text(r: &PtsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", r.spec);
    let _ = writeln!(out, "target: {} (user capacity {} bytes)", r.target, r.capacity_bytes);
    let s = &r.settings;
    let _ = writeln!(
        out,
        "stimulus: {} jobs x QD{} (total outstanding I/O {}), {} s per point",
        s.threads,
        s.iodepth,
        s.threads * s.iodepth,
        super::plan::trim_float(s.point_seconds)
    );
    for d in &r.departures {
        let _ = writeln!(out, "departs from the spec: {d}");
    }
    if let Some(i) = &r.iops {
        out.push('\n');
        iops(&mut out, i);
    }
    if let Some(w) = &r.wsat {
        out.push('\n');
        wsat(&mut out, w, r.capacity_bytes);
    }
    out
}

fn iops(out: &mut String, r: &IopsResult) {
    let _ = writeln!(out, "IOPS test");
    let _ = writeln!(out, "purge: {}", r.purge);
    let p = &r.preconditioning;
    let _ = writeln!(
        out,
        "preconditioning: {} bytes of sequential 128 KiB writes in {:.1} s ({:.0} IOPS)",
        p.bytes_written,
        p.seconds,
        p.iops()
    );
    let _ = writeln!(out, "\nround  4 KiB write IOPS  window");
    let (first, last) = r.window.as_ref().map(|w| (w.first_round, w.last_round)).unwrap_or((0, 0));
    for round in &r.rounds {
        let mark = if (first..=last).contains(&round.round) { "*" } else { "" };
        let _ = writeln!(out, "{:>5}  {:>16.0}  {mark}", round.round, round.tracking_iops);
    }
    match &r.window {
        Some(w) => {
            let pct = |x: f64| 100.0 * x / w.average.max(f64::MIN_POSITIVE);
            let verdict = if r.steady_state { "reached" } else { "NOT reached" };
            let _ = writeln!(
                out,
                "steady state {verdict}: window rounds {}-{} (*), average {:.0} IOPS",
                w.first_round, w.last_round, w.average
            );
            let _ = writeln!(
                out,
                "  range     max-min {:.0} = {:.1}% of average (limit 20%): {}",
                w.range,
                pct(w.range),
                met(w.range_ok)
            );
            let _ = writeln!(
                out,
                "  slope     fit excursion {:.0} = {:.1}% of average (limit 10%; slope {:.1} IOPS/round): {}",
                w.slope_excursion,
                pct(w.slope_excursion),
                w.slope,
                met(w.slope_ok)
            );
        }
        None => {
            let _ = writeln!(out, "steady state NOT reached: fewer than 5 rounds (no window)");
        }
    }
    let over = match &r.window {
        Some(w) => format!("averaged over rounds {}-{}", w.first_round, w.last_round),
        None => "averaged over every round run".to_string(),
    };
    let _ = writeln!(out, "\nIOPS by block size and R/W mix (read/write %), {over}");
    let _ = write!(out, "{:>10}", "block");
    for &m in &READ_PCTS {
        let _ = write!(out, " {:>10}", mix_label(m));
    }
    out.push('\n');
    for &bs in &BLOCK_SIZES {
        let _ = write!(out, "{:>10}", bs_label(bs));
        for &m in &READ_PCTS {
            let v = r.table.iter().find(|c| c.bs == bs && c.read_pct == m).map(|c| c.iops).unwrap_or(0.0);
            let _ = write!(out, " {:>10.0}", v);
        }
        out.push('\n');
    }
}

fn met(b: bool) -> &'static str {
    if b { "met" } else { "NOT met" }
}

fn wsat(out: &mut String, w: &WsatResult, capacity: u64) {
    let _ = writeln!(out, "Write saturation test (4 KiB random writes)");
    let _ = writeln!(out, "purge: {}", w.purge);
    let last = w.intervals.last();
    let written = last.map(|i| i.bytes_written).unwrap_or(0);
    let _ = writeln!(
        out,
        "{} intervals, {:.1} s, {:.2} GB written ({:.2}x the user capacity); stopped by {}",
        w.intervals.len(),
        last.map(|i| i.time_s).unwrap_or(0.0),
        written as f64 / 1e9,
        written as f64 / capacity.max(1) as f64,
        w.stopped_by
    );
    let _ = writeln!(
        out,
        "IOPS: first interval {:.0}, lowest {:.0}, last fifth {:.0} ({:.0}% of the first)",
        w.first_iops,
        w.min_iops,
        w.final_iops,
        100.0 * w.final_iops / w.first_iops.max(f64::MIN_POSITIVE)
    );
    // The curve at about ten evenly spaced points of capacity written.
    let _ = writeln!(out, "\n{:>9} {:>9} {:>10} {:>10}", "interval", "time s", "TGBW GB", "IOPS");
    let n = w.intervals.len();
    let step = n.div_ceil(12).max(1);
    for (k, i) in w.intervals.iter().enumerate() {
        if k % step == 0 || k + 1 == n {
            let _ = writeln!(
                out,
                "{:>9} {:>9.1} {:>10.3} {:>10.0}",
                i.index,
                i.time_s,
                i.bytes_written as f64 / 1e9,
                i.iops
            );
        }
    }
}
