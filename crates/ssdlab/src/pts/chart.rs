//! The PTS figures, drawn with the report figures' style ([`plot::Chart`]): steady-state
//! convergence, the measurement window, IOPS by block size and mix, and the WSAT curve by time
//! and by bytes written. Each is written as PNG and SVG.

use std::path::{Path, PathBuf};

use plot::{Chart, Point, Series, write_chart};

use super::PtsReport;
use super::executor::PtsError;
use super::plan::{BLOCK_SIZES, READ_PCTS, bs_label, mix_label};

fn pt(x: f64, y: f64) -> Point {
    Point { x, mean: y, lo: y, hi: y }
}

/// Draws the figures of `r` into `dir` (created if missing); returns the files written.
pub fn write_charts(r: &PtsReport, dir: &Path) -> Result<Vec<PathBuf>, PtsError> {
    std::fs::create_dir_all(dir).map_err(|e| PtsError::Target(format!("creating {}: {e}", dir.display())))?;
    let mut charts: Vec<(&str, Chart)> = Vec::new();
    let base = |title: String, subtitle: String, x: &str, y: &str| Chart {
        title,
        subtitle,
        x_desc: x.into(),
        y_desc: y.into(),
        categories: None,
        series: Vec::new(),
        log_y: false,
    };
    let short = r.target.split(" (").next().unwrap_or(&r.target).to_string();
    if let Some(i) = &r.iops {
        let mut conv = base(
            format!("PTS IOPS: steady-state convergence, {short}"),
            "random writes (0/100), each block size by round".into(),
            "round",
            "IOPS (log)",
        );
        conv.log_y = true;
        for &bs in &BLOCK_SIZES {
            let points = i
                .rounds
                .iter()
                .filter_map(|round| {
                    let p = round.points.iter().find(|p| p.bs == bs && p.read_pct == 0)?;
                    Some(pt(round.round as f64, p.measured.iops()))
                })
                .collect();
            conv.series.push(Series { name: bs_label(bs), points });
        }
        charts.push(("pts-iops-convergence", conv));

        let verdict = if i.steady_state { "steady state reached" } else { "steady state NOT reached" };
        let mut win = base(
            format!("PTS IOPS: steady-state window, {short}"),
            format!("tracking variable: 4 KiB random-write IOPS; {verdict}"),
            "round",
            "IOPS",
        );
        win.series.push(Series {
            name: "4 KiB write IOPS".into(),
            points: i.rounds.iter().map(|r| pt(r.round as f64, r.tracking_iops)).collect(),
        });
        if let Some(w) = &i.window {
            let (a, b) = (w.first_round as f64, w.last_round as f64);
            let flat = |name: &str, y: f64| Series { name: name.into(), points: vec![pt(a, y), pt(b, y)] };
            win.series.push(flat("window average", w.average));
            win.series.push(Series {
                name: "least-squares fit".into(),
                points: vec![pt(a, w.intercept), pt(b, w.intercept + w.slope * (b - a))],
            });
            win.series.push(flat("average +10%", 1.1 * w.average));
            win.series.push(flat("average -10%", 0.9 * w.average));
        }
        charts.push(("pts-iops-window", win));

        let mut table = base(
            format!("PTS IOPS by block size and R/W mix, {short}"),
            match &i.window {
                Some(w) => format!("averaged over rounds {}-{}", w.first_round, w.last_round),
                None => "averaged over every round".into(),
            },
            "block size",
            "IOPS (log)",
        );
        table.log_y = true;
        table.categories = Some(BLOCK_SIZES.iter().map(|&b| bs_label(b)).collect());
        for &m in &READ_PCTS {
            let points = BLOCK_SIZES
                .iter()
                .enumerate()
                .map(|(k, &bs)| {
                    let v =
                        i.table.iter().find(|c| c.bs == bs && c.read_pct == m).map(|c| c.iops).unwrap_or(0.0);
                    pt(k as f64, v)
                })
                .collect();
            table.series.push(Series { name: format!("R/W {}", mix_label(m)), points });
        }
        charts.push(("pts-iops-table", table));
    }
    if let Some(w) = &r.wsat {
        let mut time = base(
            format!("PTS write saturation, {short}"),
            "4 KiB random writes from a purged device, IOPS per interval".into(),
            "time (s)",
            "IOPS",
        );
        time.series.push(Series {
            name: String::new(),
            points: w.intervals.iter().map(|i| pt(i.time_s, i.iops)).collect(),
        });
        let mut tgbw = base(
            format!("PTS write saturation by data written, {short}"),
            format!("user capacity {:.2} GB", r.capacity_bytes as f64 / 1e9),
            "total GB written",
            "IOPS",
        );
        tgbw.series.push(Series {
            name: String::new(),
            points: w.intervals.iter().map(|i| pt(i.bytes_written as f64 / 1e9, i.iops)).collect(),
        });
        charts.push(("pts-wsat-time", time));
        charts.push(("pts-wsat-tgbw", tgbw));
    }
    let mut out = Vec::new();
    for (name, chart) in &charts {
        for ext in ["png", "svg"] {
            let path = dir.join(format!("{name}.{ext}"));
            out.push(
                write_chart(chart, &path)
                    .map_err(|e| PtsError::Target(format!("{}: {e}", path.display())))?,
            );
        }
    }
    Ok(out)
}
