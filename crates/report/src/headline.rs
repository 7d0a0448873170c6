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
            Headline {
                name: concat!($op, "_iops"),
                kind: Real,
                doc: concat!($op, "s per second of simulated time (ops.", $op, ".iops)"),
                get: |r| op(r, $op).map(|o| o.throughput.iops),
            },
            Headline {
                name: concat!($op, "_mean_us"),
                kind: Real,
                doc: concat!("mean ", $op, " latency, us"),
                get: |r| op(r, $op).map(|o| o.latency_ns.mean / 1e3),
            },
            Headline {
                name: concat!($op, "_p50_us"),
                kind: Real,
                doc: concat!("median ", $op, " latency, us"),
                get: |r| op(r, $op).map(|o| o.latency_ns.p50 as f64 / 1e3),
            },
            Headline {
                name: concat!($op, "_p99_us"),
                kind: Real,
                doc: concat!("99th percentile ", $op, " latency, us"),
                get: |r| op(r, $op).map(|o| o.latency_ns.p99 as f64 / 1e3),
            },
            Headline {
                name: concat!($op, "_p999_us"),
                kind: Real,
                doc: concat!("99.9th percentile ", $op, " latency, us"),
                get: |r| op(r, $op).map(|o| o.latency_ns.p999 as f64 / 1e3),
            },
            Headline {
                name: concat!($op, "_max_us"),
                kind: Real,
                doc: concat!("longest ", $op, ", us"),
                get: |r| op(r, $op).map(|o| o.latency_ns.max as f64 / 1e3),
            },
        ]
    };
}

fn op<'a>(r: &'a Report, name: &str) -> Option<&'a OpReport> {
    r.ops.get(name)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

const TOTALS: [Headline; 3] = [
    Headline {
        name: "iops",
        kind: Real,
        doc: "commands per second, all directions (total.iops)",
        get: |r| Some(r.total.iops),
    },
    Headline {
        name: "mb_per_s",
        kind: Real,
        doc: "10^6 bytes per second (total.mb_per_s)",
        get: |r| Some(r.total.mb_per_s),
    },
    Headline {
        name: "errors",
        kind: Count,
        doc: "failed commands, all directions",
        get: |r| Some(r.ops.values().map(|o| o.errors).sum::<u64>() as f64),
    },
];

const READ: [Headline; 6] = op_metrics!("read");
const WRITE: [Headline; 6] = op_metrics!("write");

const DEVICE: [Headline; 16] = [
    Headline { name: "waf", kind: Real, doc: "write amplification (waf.waf)", get: |r| Some(r.waf.waf) },
    Headline {
        name: "data_waf",
        kind: Real,
        doc: "write amplification without translation pages",
        get: |r| Some(r.waf.data_waf),
    },
    Headline {
        name: "gc_invocations",
        kind: Count,
        doc: "GC victims collected",
        get: |r| Some(r.gc.invocations as f64),
    },
    Headline {
        name: "gc_units_moved",
        kind: Count,
        doc: "units moved by GC and WL",
        get: |r| Some(r.gc.units_moved as f64),
    },
    Headline {
        name: "gc_foreground_waits",
        kind: Count,
        doc: "host writes that waited for GC",
        get: |r| Some(r.gc.foreground_waits as f64),
    },
    Headline {
        name: "blocks_erased",
        kind: Count,
        doc: "blocks erased",
        get: |r| Some(r.gc.blocks_erased as f64),
    },
    Headline {
        name: "free_blocks",
        kind: Count,
        doc: "free blocks at the end",
        get: |r| Some(r.gc.free_blocks as f64),
    },
    Headline {
        name: "erases_mean",
        kind: Real,
        doc: "mean erase count of a block (wear.mean)",
        get: |r| Some(r.wear.mean),
    },
    Headline {
        name: "erases_max",
        kind: Count,
        doc: "largest erase count of a block",
        get: |r| Some(f64::from(r.wear.max)),
    },
    Headline {
        name: "data_cache_hit_ratio",
        kind: Real,
        doc: "data-cache hit ratio, 0 to 1",
        get: |r| Some(r.cache.data.ratio),
    },
    Headline {
        name: "cmt_hit_ratio",
        kind: Real,
        doc: "mapping-cache hit ratio, 0 to 1 (none without DFTL)",
        get: |r| r.cache.mapping.as_ref().map(|m| m.ratio),
    },
    Headline {
        name: "channel_busy",
        kind: Real,
        doc: "mean busy fraction of the channels",
        get: |r| mean(&r.utilisation.channels),
    },
    Headline {
        name: "die_busy",
        kind: Real,
        doc: "mean busy fraction of the dies",
        get: |r| mean(&r.utilisation.dies),
    },
    Headline {
        name: "flash_reads",
        kind: Count,
        doc: "page reads through the FIL",
        get: |r| Some(r.flash.reads as f64),
    },
    Headline {
        name: "flash_programs",
        kind: Count,
        doc: "page programs through the FIL",
        get: |r| Some(r.flash.programs as f64),
    },
    Headline {
        name: "sim_time_ms",
        kind: Real,
        doc: "simulated time of the run, ms",
        get: |r| Some(r.sim_time_ns as f64 / 1e6),
    },
];

const WALL: [Headline; 1] = [Headline {
    name: "wall_time_s",
    kind: Real,
    doc: "host wall-clock time of the simulation, s (the only column that differs between runs of the same inputs)",
    get: |r| Some(r.wall_time_s),
}];

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
