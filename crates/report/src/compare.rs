//! Comparing reports (`ssdlab compare A.json B.json ...`): the everyday question "did my FTL
//! change help?".
//!
//! ```text
//!   A.json ─┐  read_report (schema checked)
//!   B.json ─┼──────────────▶ compare ──▶ Comparison ──▶ render (text table) / JSON
//!   C.json ─┘                  │
//!                              ├─ metrics: one row per measure, a value per file and its change vs A
//!                              └─ differences: resolved config, workload, seed, start state
//! ```
//!
//! The first file is the baseline. A change is relative (`+100.0%` is twice the baseline)
//! except for ratios already in percent (hit ratios, busy fractions), whose change is in
//! percentage points. A baseline of 0 has no relative change unless the other value is 0 too.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::schema::{Report, SCHEMA};

/// Why a report file could not be compared.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not JSON, or not a report of this schema's shape.
    Json {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        source: serde_json::Error,
    },
    /// The file names another schema (or none).
    Schema {
        /// The file.
        path: PathBuf,
        /// Its `schema` field, if it has one.
        found: Option<String>,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ReadError::Json { path, source } => {
                write!(f, "{}: not a valid ssdlab report: {source}", path.display())
            }
            ReadError::Schema { path, found } => {
                let found = found.as_deref().map_or("missing".to_string(), |s| format!("{s:?}"));
                write!(
                    f,
                    "{}: schema is {found}, expected {SCHEMA:?} (a report from `ssdlab run --json`)",
                    path.display()
                )
            }
        }
    }
}

/// The cause is part of the message (one line under `anyhow`'s `{:#}`), so no `source`.
impl std::error::Error for ReadError {}

/// Reads a JSON report written by `ssdlab run --json`, refusing any other schema.
pub fn read_report(path: &Path) -> Result<Report, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io { path: path.into(), source })?;
    let value: Value =
        serde_json::from_str(&text).map_err(|source| ReadError::Json { path: path.into(), source })?;
    let found = value.get("schema").map(|s| s.as_str().map_or_else(|| s.to_string(), str::to_string));
    if found.as_deref() != Some(SCHEMA) {
        return Err(ReadError::Schema { path: path.into(), found });
    }
    serde_json::from_value(value).map_err(|source| ReadError::Json { path: path.into(), source })
}

/// How a metric's change from the baseline is expressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// `(value - baseline) / baseline`, in percent.
    Relative,
    /// `value - baseline`, for values in percent (percentage points).
    Points,
}

/// One measure across the files.
#[derive(Clone, Debug, Serialize)]
pub struct Metric {
    /// What it measures, e.g. `read p99 latency`.
    pub name: String,
    /// Its unit, e.g. `us`.
    pub unit: &'static str,
    /// How [`Metric::changes`] is expressed.
    pub change_kind: ChangeKind,
    /// One value per file (`None`: the file has no such measure, e.g. no reads).
    pub values: Vec<Option<f64>>,
    /// Each value's change from the first file's (`None` where undefined).
    pub changes: Vec<Option<f64>>,
}

/// A setting that differs between the files.
#[derive(Clone, Debug, Serialize)]
pub struct Difference {
    /// Where it is, e.g. `device.ftl.gc.policy` or `workload[0].iodepth`.
    pub field: String,
    /// Its value per file (`None`: not set in that file).
    pub values: Vec<Option<String>>,
}

/// Reports side by side.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The files' names, baseline first.
    pub files: Vec<String>,
    /// The measures.
    pub metrics: Vec<Metric>,
    /// Configuration, workload, seed and start state that differ.
    pub differences: Vec<Difference>,
}

/// A measure of one report: name, unit, change kind, value.
type Row = (String, &'static str, ChangeKind, Option<f64>);

/// Compares `reports` (named by `files`), the first being the baseline.
pub fn compare(files: &[String], reports: &[Report]) -> Comparison {
    // Every direction any report ran, so each gets its rows in the same place.
    let mut ops: Vec<&str> = reports.iter().flat_map(|r| r.ops.keys().map(String::as_str)).collect();
    ops.sort_by_key(|op| (["read", "write", "trim"].iter().position(|o| o == op).unwrap_or(3), *op));
    ops.dedup();
    let per_report: Vec<Vec<Row>> = reports.iter().map(|r| rows(r, &ops)).collect();
    // Every measure any report has, in the order first met.
    let mut order: Vec<(String, &'static str, ChangeKind)> = Vec::new();
    for rows in &per_report {
        for (name, unit, kind, _) in rows {
            if !order.iter().any(|(n, ..)| n == name) {
                order.push((name.clone(), unit, *kind));
            }
        }
    }
    let metrics = order
        .into_iter()
        .map(|(name, unit, change_kind)| {
            let values: Vec<Option<f64>> =
                per_report.iter().map(|rows| rows.iter().find(|r| r.0 == name).and_then(|r| r.3)).collect();
            let base = values.first().copied().flatten();
            let changes = values.iter().map(|v| change(change_kind, base, *v)).collect();
            Metric { name, unit, change_kind, values, changes }
        })
        .collect();
    Comparison { files: files.to_vec(), metrics, differences: differences(reports) }
}

/// The change of `v` from `base`.
pub fn change(kind: ChangeKind, base: Option<f64>, v: Option<f64>) -> Option<f64> {
    let (base, v) = (base?, v?);
    if !(base.is_finite() && v.is_finite()) {
        return None;
    }
    match kind {
        ChangeKind::Points => Some(v - base),
        ChangeKind::Relative if v == base => Some(0.0),
        ChangeKind::Relative if base == 0.0 => None,
        ChangeKind::Relative => Some((v - base) / base.abs() * 100.0),
    }
}

/// The measures of one report, with rows for each of `ops` (blank if it did not run).
fn rows(r: &Report, ops: &[&str]) -> Vec<Row> {
    use ChangeKind::{Points, Relative};
    let mut out: Vec<Row> = Vec::new();
    let mut add = |name: &str, unit, kind, v: Option<f64>| out.push((name.to_string(), unit, kind, v));
    add("IOPS", "cmd/s", Relative, Some(r.total.iops));
    add("bandwidth", "MB/s", Relative, Some(r.total.mb_per_s));
    for op in ops {
        let o = r.ops.get(*op);
        let l = o.map(|o| &o.latency_ns);
        let us = |ns: Option<f64>| ns.map(|ns| ns / 1e3);
        add(&format!("{op} IOPS"), "cmd/s", Relative, o.map(|o| o.throughput.iops));
        add(&format!("{op} latency mean"), "us", Relative, us(l.map(|l| l.mean)));
        add(&format!("{op} latency p50"), "us", Relative, us(l.map(|l| l.p50 as f64)));
        add(&format!("{op} latency p99"), "us", Relative, us(l.map(|l| l.p99 as f64)));
        add(&format!("{op} latency p99.9"), "us", Relative, us(l.map(|l| l.p999 as f64)));
        add(&format!("{op} latency p99.99"), "us", Relative, us(l.map(|l| l.p9999 as f64)));
        add(&format!("{op} latency max"), "us", Relative, us(l.map(|l| l.max as f64)));
        add(&format!("{op} errors"), "cmds", Relative, o.map(|o| o.errors as f64));
    }
    // Each flow of a run of several jobs (rows line up by job name across the reports).
    for f in r.flows.iter().filter(|_| r.flows.len() > 1) {
        for (op, o) in &f.ops {
            let (name, l) = (format!("flow {} {op}", f.name), &o.latency_ns);
            add(&format!("{name} IOPS"), "cmd/s", Relative, Some(o.throughput.iops));
            add(&format!("{name} latency mean"), "us", Relative, Some(l.mean / 1e3));
            add(&format!("{name} latency p99"), "us", Relative, Some(l.p99 as f64 / 1e3));
        }
        // The flash work it caused (reports from before issue 30's per-flow counts have none).
        if let Some(fl) = &f.flash {
            let name = format!("flow {}", f.name);
            add(&format!("{name} flash reads"), "pages", Relative, Some(fl.reads as f64));
            add(&format!("{name} flash programs"), "pages", Relative, Some(fl.programs as f64));
            add(&format!("{name} GC programs"), "pages", Relative, Some(fl.gc_programs as f64));
            add(&format!("{name} erases"), "blocks", Relative, Some(fl.erases as f64));
        }
    }
    add("WAF", "ratio", Relative, Some(r.waf.waf));
    add("data WAF", "ratio", Relative, Some(r.waf.data_waf));
    add("GC victims", "blocks", Relative, Some(r.gc.invocations as f64));
    add("GC units moved", "units", Relative, Some(r.gc.units_moved as f64));
    add("blocks erased", "blocks", Relative, Some(r.gc.blocks_erased as f64));
    add("foreground GC waits", "cmds", Relative, Some(r.gc.foreground_waits as f64));
    add("free blocks at end", "blocks", Relative, Some(r.gc.free_blocks as f64));
    add("erases per block mean", "erases", Relative, Some(r.wear.mean));
    add("erases per block max", "erases", Relative, Some(f64::from(r.wear.max)));
    add("data-cache hit ratio", "%", Points, Some(r.cache.data.ratio * 100.0));
    add("CMT hit ratio", "%", Points, r.cache.mapping.as_ref().map(|m| m.ratio * 100.0));
    add("channel busy (mean)", "%", Points, mean(&r.utilisation.channels).map(|v| v * 100.0));
    add("die busy (mean)", "%", Points, mean(&r.utilisation.dies).map(|v| v * 100.0));
    add("flash reads", "pages", Relative, Some(r.flash.reads as f64));
    add("flash programs", "pages", Relative, Some(r.flash.programs as f64));
    add("simulated time", "ms", Relative, Some(r.sim_time_ns as f64 / 1e6));
    out
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The settings that differ: resolved device configuration, workload, replay, seed, start.
fn differences(reports: &[Report]) -> Vec<Difference> {
    let flat: Vec<BTreeMap<String, String>> = reports.iter().map(settings).collect();
    let mut fields: Vec<&String> = flat.iter().flat_map(|m| m.keys()).collect();
    fields.sort();
    fields.dedup();
    fields
        .into_iter()
        .filter_map(|field| {
            let values: Vec<Option<String>> = flat.iter().map(|m| m.get(field).cloned()).collect();
            values.iter().any(|v| *v != values[0]).then(|| Difference { field: field.clone(), values })
        })
        .collect()
}

/// A report's inputs as `field -> value`.
fn settings(r: &Report) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    out.insert("seed".to_string(), r.seed.to_string());
    out.insert("initial_state".to_string(), r.initial_state.clone());
    out.insert("ssdlab_version".to_string(), r.ssdlab_version.clone());
    flatten("device", &serde_json::to_value(&r.device).unwrap_or(Value::Null), &mut out);
    flatten("workload", &serde_json::to_value(&r.workload).unwrap_or(Value::Null), &mut out);
    if let Some(replay) = &r.replay {
        for (key, value) in [("file", &replay.file), ("format", &replay.format), ("mode", &replay.mode)] {
            out.insert(format!("replay.{key}"), value.clone());
        }
    }
    out
}

/// Flattens `v` into `prefix.key` / `prefix[i]` paths of scalars.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        Value::Array(items) => {
            out.insert(format!("{prefix}.len"), items.len().to_string());
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// The comparison as a text table: a column per file with each value's change from the
/// baseline, then the differing settings.
pub fn render(c: &Comparison) -> String {
    let mut s = String::new();
    for (i, f) in c.files.iter().enumerate() {
        let role = if i == 0 { " (baseline)" } else { "" };
        let _ = writeln!(s, "[{}] {f}{role}", i + 1);
    }
    let _ = writeln!(s);
    let cells: Vec<Vec<String>> = c
        .metrics
        .iter()
        .map(|m| {
            m.values
                .iter()
                .zip(&m.changes)
                .enumerate()
                .map(|(i, (v, ch))| match (v, i) {
                    (None, _) => "-".to_string(),
                    (Some(v), 0) => number(*v),
                    (Some(v), _) => format!("{} {}", number(*v), change_text(m.change_kind, *ch)),
                })
                .collect()
        })
        .collect();
    let name_w = c.metrics.iter().map(|m| m.name.len() + m.unit.len() + 3).max().unwrap_or(6).max(6);
    let widths: Vec<usize> = (0..c.files.len())
        .map(|i| cells.iter().map(|row| row[i].chars().count()).max().unwrap_or(0).max(4))
        .collect();
    let _ = write!(s, "{:name_w$}", "metric");
    for (i, w) in widths.iter().enumerate() {
        let _ = write!(s, "  {:>w$}", format!("[{}]", i + 1));
    }
    let _ = writeln!(s);
    for (m, row) in c.metrics.iter().zip(&cells) {
        let _ = write!(s, "{:name_w$}", format!("{} ({})", m.name, m.unit));
        for (cell, w) in row.iter().zip(&widths) {
            let _ = write!(s, "  {cell:>w$}");
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s);
    if c.differences.is_empty() {
        let _ = writeln!(s, "config differences: none (same device, workload, seed and start)");
        return s;
    }
    let field_w = c.differences.iter().map(|d| d.field.len()).max().unwrap_or(0).max(18);
    let widths: Vec<usize> = (0..c.files.len())
        .map(|i| {
            let values = c.differences.iter().map(|d| d.values[i].as_deref().map_or(1, str::len));
            values.max().unwrap_or(0).max(3)
        })
        .collect();
    let _ = write!(s, "{:field_w$}", "config differences");
    for (i, w) in widths.iter().enumerate() {
        let _ = write!(s, "  {:w$}", format!("[{}]", i + 1));
    }
    let _ = writeln!(s);
    for d in &c.differences {
        let _ = write!(s, "{:field_w$}", d.field);
        for (v, w) in d.values.iter().zip(&widths) {
            let _ = write!(s, "  {:w$}", v.as_deref().unwrap_or("-"));
        }
        let _ = writeln!(s);
    }
    s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
}

/// A change as text: `+100.0%`, `-2.5 pp`, `(n/a)` when undefined.
fn change_text(kind: ChangeKind, ch: Option<f64>) -> String {
    match (kind, ch) {
        (_, None) => "(n/a)".to_string(),
        (ChangeKind::Relative, Some(c)) => format!("({c:+.1}%)"),
        (ChangeKind::Points, Some(c)) => format!("({c:+.1} pp)"),
    }
}

/// A value: thousands separators from 1,000; whole numbers as such; else 3 significant
/// digits.
fn number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if a >= 1000.0 {
        return crate::grouped(v);
    }
    let decimals = if v.fract() == 0.0 || a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.decimals$}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::schema::{OpReport, Throughput};

    /// A report of `iops` total and reads only, on a preset device.
    pub(crate) fn report(iops: f64) -> Report {
        let device = firmware::presets::get("softssd").expect("preset").expect("valid");
        let value = serde_json::json!({
            "schema": SCHEMA,
            "ssdlab_version": "test",
            "seed": 1,
            "device": device,
            "workload": [host::workload::JobSpec::new("job")],
            "initial_state": "fresh",
            "sim_time_ns": 1_000_000,
            "window_start_ns": 0,
            "window_ns": 1_000_000,
            "wall_time_s": 0.1,
            "requests_per_wall_sec": 1.0,
            "ops": {},
            "total": Throughput::default(),
            "waf": crate::schema::WafReport::default(),
            "gc": crate::schema::GcReport::default(),
            "wear": crate::schema::WearReport::default(),
            "cache": crate::schema::CacheReport::default(),
            "utilisation": crate::schema::Utilisation { channels: vec![0.5, 0.5], ..Default::default() },
            "flash": crate::schema::FlashReport::default(),
            "link": crate::schema::LinkReport::default(),
            "smart": {
                "data_units_read": 0, "data_units_written": 0, "host_read_commands": 0,
                "host_write_commands": 0, "media_errors": 0, "percentage_used": 0, "available_spare": 100
            },
            "timeseries": crate::schema::TimeSeriesReport::default(),
            "replay": null,
        });
        let mut r: Report = serde_json::from_value(value).expect("a report");
        r.total = Throughput { count: 1000, iops, mb_per_s: iops * 4096.0 / 1e6 };
        let op = OpReport {
            throughput: r.total.clone(),
            bytes: 4096 * 1000,
            errors: 0,
            latency_ns: sim::stats::Summary {
                count: 1000,
                mean: 80_000.0,
                p50: 70_000,
                p99: 200_000,
                ..Default::default()
            },
            phases_ns: Default::default(),
            phases_p50_ns: Default::default(),
            phases_p99_ns: Default::default(),
            latency_cdf_ns: Vec::new(),
        };
        r.ops.insert("read".into(), op);
        r
    }

    fn metric<'a>(c: &'a Comparison, name: &str) -> &'a Metric {
        c.metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no metric {name}"))
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("r{i}.json")).collect()
    }

    #[test]
    fn identical_reports_differ_by_nothing() {
        let r = report(50_000.0);
        let c = compare(&names(2), &[r.clone(), r]);
        for m in c.metrics.iter().filter(|m| m.values[0].is_some()) {
            assert_eq!(m.changes, vec![Some(0.0), Some(0.0)], "{}", m.name);
        }
        // No mapping cache on this device: a row without values, not a 0.
        assert_eq!(metric(&c, "CMT hit ratio").values, vec![None, None]);
        assert!(c.differences.is_empty(), "{:?}", c.differences);
        let text = render(&c);
        assert!(text.contains("(+0.0%)") && text.contains("config differences: none"), "{text}");
    }

    #[test]
    fn doubled_iops_is_plus_one_hundred_percent() {
        let c = compare(&names(3), &[report(50_000.0), report(100_000.0), report(25_000.0)]);
        let iops = metric(&c, "IOPS");
        assert_eq!(iops.values, vec![Some(50_000.0), Some(100_000.0), Some(25_000.0)]);
        assert_eq!(iops.changes, vec![Some(0.0), Some(100.0), Some(-50.0)]);
        let text = render(&c);
        assert!(text.contains("100,000 (+100.0%)") && text.contains("25,000 (-50.0%)"), "{text}");
        assert!(text.contains("[1] r0.json (baseline)"), "{text}");
    }

    #[test]
    fn ratios_change_in_points_and_zero_baselines_have_no_ratio() {
        assert_eq!(change(ChangeKind::Points, Some(40.0), Some(45.0)), Some(5.0));
        assert_eq!(change(ChangeKind::Relative, Some(0.0), Some(0.0)), Some(0.0));
        assert_eq!(change(ChangeKind::Relative, Some(0.0), Some(3.0)), None);
        assert_eq!(change(ChangeKind::Relative, None, Some(3.0)), None);
        assert_eq!(change(ChangeKind::Relative, Some(-2.0), Some(-1.0)), Some(50.0));
        assert_eq!(change_text(ChangeKind::Points, Some(-2.5)), "(-2.5 pp)");
        assert_eq!(change_text(ChangeKind::Relative, None), "(n/a)");
    }

    #[test]
    fn measures_one_file_lacks_are_blank() {
        let mut b = report(50_000.0);
        let w = b.ops["read"].clone();
        b.ops.insert("write".into(), w);
        let c = compare(&names(2), &[report(50_000.0), b]);
        let m = metric(&c, "write latency p99");
        assert_eq!(m.values, vec![None, Some(200.0)]);
        assert_eq!(m.changes, vec![None, None]);
    }

    #[test]
    fn config_workload_and_seed_differences_are_listed() {
        let a = report(1.0);
        let mut b = report(1.0);
        b.seed = 7;
        b.device.ftl.op = 0.25;
        b.workload[0].set("iodepth", Some("64")).unwrap();
        let c = compare(&names(2), &[a, b]);
        let fields: Vec<&str> = c.differences.iter().map(|d| d.field.as_str()).collect();
        assert!(fields.contains(&"seed") && fields.contains(&"device.ftl.op"), "{fields:?}");
        assert!(fields.iter().any(|f| f.starts_with("workload[0].iodepth")), "{fields:?}");
        let op = c.differences.iter().find(|d| d.field == "device.ftl.op").unwrap();
        assert_eq!(op.values[1].as_deref(), Some("0.25"));
        let text = render(&c);
        let line = text.lines().find(|l| l.starts_with("device.ftl.op")).expect(&text);
        assert!(line.ends_with("0.25"), "{text}");
    }

    #[test]
    fn other_schemas_are_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("ssdlab-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join("old.json");
        let mut v = serde_json::to_value(report(1.0)).unwrap();
        v["schema"] = "ssdlab.report/0".into();
        std::fs::write(&old, v.to_string()).unwrap();
        let e = read_report(&old).unwrap_err().to_string();
        assert!(e.contains("old.json") && e.contains("ssdlab.report/0") && e.contains(SCHEMA), "{e}");
        let none = dir.join("none.json");
        std::fs::write(&none, "{\"iops\": 3}").unwrap();
        assert!(read_report(&none).unwrap_err().to_string().contains("schema is missing"));
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "not json").unwrap();
        assert!(matches!(read_report(&bad), Err(ReadError::Json { .. })));
        assert!(matches!(read_report(&dir.join("absent.json")), Err(ReadError::Io { .. })));
        let good = dir.join("good.json");
        std::fs::write(&good, serde_json::to_string(&report(2.0)).unwrap()).unwrap();
        assert_eq!(read_report(&good).unwrap().total.iops, 2.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn numbers_print_for_a_table() {
        assert_eq!(number(1234567.4), "1,234,567");
        assert_eq!(number(-2500.0), "-2,500");
        assert_eq!(number(123.4), "123");
        assert_eq!(number(12.34), "12.3");
        assert_eq!(number(2.08), "2.08");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(32.0), "32");
        assert_eq!(number(0.0123), "0.012");
    }
}
