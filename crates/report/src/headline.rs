//! The headline metrics of a report: the numbers a sweep's table keeps per run (`ssdlab
//! sweep`), one column each, named with their unit (`read_p99_us`, `waf`).
//!
//! Every metric is taken from the report as written, so a table row and the run's JSON report
//! agree exactly. A metric the run has no value for (reads in a write-only run, the mapping
//! cache without DFTL) is `None`.

use crate::schema::{OpReport, Report};

/// Whether a metric is a count or a measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// A whole number (commands, blocks, transactions).
    Count,
    /// A real number (rates, ratios, latencies).
    Real,
}

/// One headline metric: its column name, its kind and how to read it from a report.
#[derive(Clone, Copy)]
pub struct Headline {
    /// Column name, unit included, e.g. `read_p99_us`.
    pub name: &'static str,
    /// Count or real.
    pub kind: MetricKind,
    /// What it means, for documentation and help texts.
    pub doc: &'static str,
    /// Its value in `report`, `None` if the run has none.
    pub get: fn(&Report) -> Option<f64>,
}

impl std::fmt::Debug for Headline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Headline").field("name", &self.name).field("kind", &self.kind).finish()
    }
}

use MetricKind::{Count, Real};

macro_rules! op_metrics {
    ($op:literal) => {
        [
            h(
                concat!($op, "_iops"),
                Real,
                concat!($op, "s per second of simulated time (ops.", $op, ".iops)"),
                |r| op(r, $op).map(|o| o.throughput.iops),
            ),
            h(concat!($op, "_mean_us"), Real, concat!("mean ", $op, " latency, us"), |r| {
                op(r, $op).map(|o| o.latency_ns.mean / 1e3)
            }),
            h(concat!($op, "_p50_us"), Real, concat!("median ", $op, " latency, us"), |r| {
                op(r, $op).map(|o| o.latency_ns.p50 as f64 / 1e3)
            }),
            h(concat!($op, "_p99_us"), Real, concat!("99th percentile ", $op, " latency, us"), |r| {
                op(r, $op).map(|o| o.latency_ns.p99 as f64 / 1e3)
            }),
            h(concat!($op, "_p999_us"), Real, concat!("99.9th percentile ", $op, " latency, us"), |r| {
                op(r, $op).map(|o| o.latency_ns.p999 as f64 / 1e3)
            }),
            h(concat!($op, "_p9999_us"), Real, concat!("99.99th percentile ", $op, " latency, us"), |r| {
                op(r, $op).map(|o| o.latency_ns.p9999 as f64 / 1e3)
            }),
            h(concat!($op, "_max_us"), Real, concat!("longest ", $op, ", us"), |r| {
                op(r, $op).map(|o| o.latency_ns.max as f64 / 1e3)
            }),
        ]
    };
}

/// A headline metric (shorter to list than the struct).
const fn h(
    name: &'static str,
    kind: MetricKind,
    doc: &'static str,
    get: fn(&Report) -> Option<f64>,
) -> Headline {
    Headline { name, kind, doc, get }
}

fn op<'a>(r: &'a Report, name: &str) -> Option<&'a OpReport> {
    r.ops.get(name)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

const TOTALS: [Headline; 3] = [
    h("iops", Real, "commands per second, all directions (total.iops)", |r| Some(r.total.iops)),
    h("mb_per_s", Real, "10^6 bytes per second (total.mb_per_s)", |r| Some(r.total.mb_per_s)),
    h("errors", Count, "failed commands, all directions", |r| {
        Some(r.ops.values().map(|o| o.errors).sum::<u64>() as f64)
    }),
];

const READ: [Headline; 7] = op_metrics!("read");
const WRITE: [Headline; 7] = op_metrics!("write");

const DEVICE: [Headline; 16] = [
    h("waf", Real, "write amplification (waf.waf)", |r| Some(r.waf.waf)),
    h("data_waf", Real, "write amplification without translation pages", |r| Some(r.waf.data_waf)),
    h("gc_invocations", Count, "GC victims collected", |r| Some(r.gc.invocations as f64)),
    h("gc_units_moved", Count, "units moved by GC and WL", |r| Some(r.gc.units_moved as f64)),
    h("gc_foreground_waits", Count, "host writes that waited for GC", |r| Some(r.gc.foreground_waits as f64)),
    h("blocks_erased", Count, "blocks erased", |r| Some(r.gc.blocks_erased as f64)),
    h("free_blocks", Count, "free blocks at the end", |r| Some(r.gc.free_blocks as f64)),
    h("erases_mean", Real, "mean erase count of a block (wear.mean)", |r| Some(r.wear.mean)),
    h("erases_max", Count, "largest erase count of a block", |r| Some(f64::from(r.wear.max))),
    h("data_cache_hit_ratio", Real, "data-cache hit ratio, 0 to 1", |r| Some(r.cache.data.ratio)),
    h("cmt_hit_ratio", Real, "mapping-cache hit ratio, 0 to 1 (none without DFTL)", |r| {
        r.cache.mapping.as_ref().map(|m| m.ratio)
    }),
    h("channel_busy", Real, "mean busy fraction of the channels", |r| mean(&r.utilisation.channels)),
    h("die_busy", Real, "mean busy fraction of the dies", |r| mean(&r.utilisation.dies)),
    h("flash_reads", Count, "page reads through the FIL", |r| Some(r.flash.reads as f64)),
    h("flash_programs", Count, "page programs through the FIL", |r| Some(r.flash.programs as f64)),
    h("sim_time_ms", Real, "simulated time of the run, ms", |r| Some(r.sim_time_ns as f64 / 1e6)),
];

const WALL: [Headline; 1] = [h(
    "wall_time_s",
    Real,
    "host wall-clock time of the simulation, s (the only column that differs between runs of the same inputs)",
    |r| Some(r.wall_time_s),
)];

/// Every headline metric, in table order.
pub fn headlines() -> impl Iterator<Item = &'static Headline> {
    TOTALS.iter().chain(&READ).chain(&WRITE).chain(&DEVICE).chain(&WALL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::report;

    #[test]
    fn every_metric_is_documented() {
        let doc = include_str!("../../../docs/report-schema.md");
        let table = &doc[doc.find("## In a sweep's table").expect("the section")..];
        for h in headlines() {
            assert!(table.contains(&format!("`{}`", h.name)), "{} is not in docs/report-schema.md", h.name);
        }
    }

    #[test]
    fn names_are_unique_and_values_come_from_the_report() {
        let mut names: Vec<&str> = headlines().map(|h| h.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate metric names");
        let r = report(1234.5);
        let value = |name: &str| (headlines().find(|h| h.name == name).unwrap().get)(&r);
        assert_eq!(value("iops"), Some(1234.5));
        assert_eq!(value("read_p99_us"), Some(200.0));
        assert_eq!(value("read_mean_us"), Some(80.0));
        assert_eq!(value("write_iops"), None, "no writes ran");
        assert_eq!(value("channel_busy"), Some(0.5));
        assert_eq!(value("errors"), Some(0.0));
    }
}
