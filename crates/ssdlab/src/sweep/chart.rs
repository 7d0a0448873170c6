//! A sweep's chart (`ssdlab sweep plot`, `ssdlab.plot`): a metric against an axis, a series
//! per value of another axis, the mean over the seeds with ±1 standard deviation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plot::{Chart, Point, Series};

use super::table::{Column, ColumnData, Table};

/// What to draw: a metric against an axis, a series per value of another.
#[derive(Clone, Debug, Default)]
pub struct ChartSpec {
    /// The axis along x.
    pub x: String,
    /// The metric along y.
    pub y: String,
    /// The axis whose values get a series each.
    pub hue: Option<String>,
    /// `AXIS=VALUE` filters; every other axis with several values must be fixed by one.
    pub filter: Vec<String>,
}

/// Why a chart cannot be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The axes, metric or filters do not fit the table.
    #[error("{0}")]
    Spec(String),
    /// The results could not be read.
    #[error(transparent)]
    Table(#[from] super::store::StoreError),
    /// The figure could not be written.
    #[error("{}", crate::message::one_line(.0))]
    Draw(#[from] plot::PlotError),
}

macro_rules! bail {
    ($($t:tt)*) => { return Err(ChartError::Spec(format!($($t)*))) };
}

/// Reads the results in `results` (a sweep's directory or table), draws the chart `spec`
/// asks for into `out` (PNG or SVG by its extension; default [`default_chart_path`]) and
/// returns the file.
pub fn draw_chart(results: &Path, spec: &ChartSpec, out: Option<&Path>) -> Result<PathBuf, ChartError> {
    let table = super::store::read_table(results)?;
    let out = out.map_or_else(|| default_chart_path(results, spec), Path::to_path_buf);
    Ok(plot::write_chart(&chart(&table, spec)?, &out)?)
}

/// `RESULTS/Y-by-X[-HUE].png`, beside the table if `results` is a file.
pub fn default_chart_path(results: &Path, a: &ChartSpec) -> PathBuf {
    let dir = if results.is_dir() {
        results.to_path_buf()
    } else {
        results.parent().unwrap_or(Path::new(".")).into()
    };
    let hue = a.hue.as_ref().map_or(String::new(), |h| format!("-{h}"));
    dir.join(format!("{}-by-{}{hue}.png", a.y, a.x))
}

/// The column `name`, which must be an axis if `axis`.
fn column<'a>(t: &'a Table, name: &str, axis: bool) -> Result<&'a Column, ChartError> {
    if axis && !t.axes.iter().any(|a| a == name) {
        bail!("`{name}` is not an axis of this sweep (axes: {})", t.axes.join(", "));
    }
    match t.column(name) {
        Some(c) => Ok(c),
        None => {
            let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
            bail!("no column `{name}` in the results (columns: {})", names.join(", "))
        }
    }
}

/// Whether row `row` of `c` holds `want` (as text, or as the same number).
fn holds(c: &Column, row: usize, want: &str) -> bool {
    match (c.data.number(row), want.parse::<f64>()) {
        (Some(v), Ok(w)) => v == w,
        _ => c.data.text(row).as_deref() == Some(want),
    }
}

/// The chart `a` asks for from table `t`: means over the seeds, bars of ±1 standard deviation.
pub fn chart(t: &Table, a: &ChartSpec) -> Result<Chart, ChartError> {
    let x = column(t, &a.x, true)?;
    let y = column(t, &a.y, false)?;
    if matches!(y.data, ColumnData::Text(_)) {
        bail!("`{}` is not a number: plot a metric such as waf or write_p99_us", a.y);
    }
    let hue = a.hue.as_deref().map(|h| column(t, h, true)).transpose()?;
    let status = column(t, "status", false)?;
    let mut rows: Vec<usize> =
        (0..t.rows()).filter(|&r| status.data.text(r).as_deref() == Some("ok")).collect();
    let mut fixed = Vec::new();
    for f in &a.filter {
        let Some((k, v)) = f.split_once('=') else { bail!("where {f}: expected AXIS=VALUE") };
        let c = column(t, k, true)?;
        rows.retain(|&r| holds(c, r, v));
        fixed.push(f.clone());
    }
    if rows.is_empty() {
        bail!("no completed run matches (of {} rows)", t.rows());
    }
    for axis in &t.axes {
        if [Some(&a.x), a.hue.as_ref()].contains(&Some(axis))
            || a.filter.iter().any(|f| f.starts_with(&format!("{axis}=")))
        {
            continue;
        }
        let c = column(t, axis, true)?;
        let mut seen: Vec<String> = rows.iter().filter_map(|&r| c.data.text(r)).collect();
        seen.sort();
        seen.dedup();
        if seen.len() > 1 {
            bail!(
                "axis `{axis}` has {} values here ({}): choose one with --where {axis}=VALUE, or make it the hue",
                seen.len(),
                seen.join(", ")
            );
        }
    }
    let numeric = !matches!(x.data, ColumnData::Text(_));
    let mut categories: Vec<String> = Vec::new();
    // hue text -> (x position -> y values), hues and x in first-seen order.
    let mut groups: Vec<(String, BTreeMap<u64, (f64, Vec<f64>)>)> = Vec::new();
    for &r in &rows {
        let Some(v) = y.data.number(r) else { continue };
        let xv = if numeric {
            x.data.number(r).unwrap_or(f64::NAN)
        } else {
            let name = x.data.text(r).unwrap_or_default();
            let i = categories.iter().position(|c| *c == name).unwrap_or_else(|| {
                categories.push(name);
                categories.len() - 1
            });
            i as f64
        };
        let h = hue.and_then(|h| h.data.text(r)).unwrap_or_default();
        let at = match groups.iter().position(|(name, _)| *name == h) {
            Some(i) => i,
            None => {
                groups.push((h, BTreeMap::new()));
                groups.len() - 1
            }
        };
        // Ordered by x: these bits order as the numbers do.
        let key = xv.to_bits() ^ if xv.is_sign_negative() { u64::MAX } else { 1 << 63 };
        groups[at].1.entry(key).or_insert((xv, Vec::new())).1.push(v);
    }
    let mut seeds = 0;
    let series = groups
        .into_iter()
        .map(|(name, points)| Series {
            name: hue.map_or(String::new(), |_| name),
            points: points
                .into_values()
                .map(|(x, ys)| {
                    seeds = seeds.max(ys.len());
                    let n = ys.len() as f64;
                    let mean = ys.iter().sum::<f64>() / n;
                    let sd = if ys.len() > 1 {
                        (ys.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
                    } else {
                        0.0
                    };
                    Point { x, mean, lo: mean - sd, hi: mean + sd }
                })
                .collect(),
        })
        .collect();
    let hue_text = a.hue.as_ref().map_or(String::new(), |h| format!(", by {h}"));
    let fixed = if fixed.is_empty() { String::new() } else { format!("; {}", fixed.join(", ")) };
    Ok(Chart {
        title: format!("{} against {}{hue_text}", a.y, a.x),
        subtitle: format!("mean over up to {seeds} seeds, bars: ±1 standard deviation{fixed}"),
        x_desc: a.x.clone(),
        y_desc: a.y.clone(),
        categories: (!numeric).then_some(categories),
        series,
        log_y: false,
    })
}
