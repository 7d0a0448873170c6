//! The measurement plan: a written region, then points of (direction, pattern, block size,
//! queue depth), each run for a fixed time after a ramp.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use sim::ByteSize;

use super::CalibrateError;

/// One measurement: an fio job of one direction and pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// fio's `rw`: randread, randwrite, read or write.
    pub rw: String,
    /// Block size.
    pub bs: ByteSize,
    /// Commands kept in flight.
    pub iodepth: u32,
}

impl Point {
    fn new(rw: &str, bs: u64, iodepth: u32) -> Point {
        Point { rw: rw.into(), bs: ByteSize(bs), iodepth }
    }

    /// Whether the point writes.
    pub fn writes(&self) -> bool {
        self.rw.ends_with("write")
    }

    /// `randread 4KiB qd1`.
    pub fn label(&self) -> String {
        format!("{} {} qd{}", self.rw, self.bs, self.iodepth)
    }
}

/// A measurement plan (`--plan FILE` reads one as TOML; `--quick` and the default are built in).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The region every point runs in (from offset 0), written sequentially first.
    pub region: ByteSize,
    /// Measured time of each point, seconds.
    pub runtime: f64,
    /// Time each point runs before it is measured, seconds.
    pub ramp: f64,
    /// The points, in the order they run.
    pub point: Vec<Point>,
}

const KIB: u64 = 1024;

/// Wall time fio takes to start and stop around a point, seconds: an assumption (measured as
/// 0.1-0.3 s on this project's machines), counted in the budget.
const FIO_OVERHEAD_S: f64 = 0.3;

/// Rate assumed for the sequential fill of the region, bytes per second, when checking the
/// budget: an assumption (a slow drive; the fill of a faster one only ends sooner).
const FILL_RATE: f64 = 50e6;

impl Plan {
    /// The default plan: random reads and writes of 4 KiB at queue depths 1 to 128, of 16 KiB
    /// to 1 MiB at depth 1, and sequential 128 KiB and 1 MiB at depths 1 and 32, in 1 GiB.
    pub fn default_plan() -> Plan {
        let mut point = Vec::new();
        for rw in ["randread", "randwrite"] {
            for qd in [1, 4, 16, 64, 128] {
                point.push(Point::new(rw, 4 * KIB, qd));
            }
            for bs in [16, 64, 256, 1024] {
                point.push(Point::new(rw, bs * KIB, 1));
            }
        }
        for rw in ["read", "write"] {
            for bs in [128, 1024] {
                for qd in [1, 32] {
                    point.push(Point::new(rw, bs * KIB, qd));
                }
            }
        }
        Plan { region: ByteSize(1 << 30), runtime: 5.0, ramp: 1.0, point }
    }

    /// The `--quick` plan: six points of 1 s in 32 MiB.
    pub fn quick() -> Plan {
        let point = vec![
            Point::new("randread", 4 * KIB, 1),
            Point::new("randread", 4 * KIB, 16),
            Point::new("randread", 64 * KIB, 1),
            Point::new("read", 1024 * KIB, 4),
            Point::new("randwrite", 4 * KIB, 1),
            Point::new("write", 128 * KIB, 1),
        ];
        Plan { region: ByteSize(32 << 20), runtime: 1.0, ramp: 0.5, point }
    }

    /// A plan from TOML text (`region`, `runtime`, `ramp`, `[[point]]` tables of `rw`, `bs`,
    /// `iodepth`), checked.
    pub fn from_toml(text: &str, label: &str) -> Result<Plan, CalibrateError> {
        let plan: Plan = toml::from_str(text).map_err(|e| {
            CalibrateError::new(format!("{label}: {}", e.message().lines().next().unwrap_or("not a plan")))
        })?;
        plan.check().map_err(|e| CalibrateError::new(format!("{label}: {e}")))?;
        Ok(plan)
    }

    /// Fails on a plan that cannot run.
    pub fn check(&self) -> Result<(), CalibrateError> {
        let bad = |m: String| Err(CalibrateError::new(m));
        if self.point.is_empty() {
            return bad("the plan has no points".into());
        }
        if !self.runtime.is_finite() || self.runtime <= 0.0 || !self.ramp.is_finite() || self.ramp < 0.0 {
            return bad(format!(
                "runtime must be above 0 and ramp at least 0 (got {} and {})",
                self.runtime, self.ramp
            ));
        }
        for p in &self.point {
            if !["randread", "randwrite", "read", "write"].contains(&p.rw.as_str()) {
                return bad(format!("point {}: rw must be randread, randwrite, read or write", p.label()));
            }
            if p.bs.0 == 0 || p.bs.0 % 512 != 0 || p.bs.0 > self.region.0 {
                return bad(format!("point {}: bs must be a multiple of 512 B within the region", p.label()));
            }
            if p.iodepth == 0 || p.iodepth > 1024 {
                return bad(format!("point {}: iodepth must be 1 to 1024", p.label()));
            }
        }
        Ok(())
    }

    /// The wall time the plan takes at least: the fill (at an assumed 50 MB/s) and every
    /// point's ramp, runtime and fio's start-up.
    pub fn estimate(&self) -> Duration {
        let fill = self.region.0 as f64 / FILL_RATE + FIO_OVERHEAD_S;
        let points = self.point.len() as f64 * (self.runtime + self.ramp + FIO_OVERHEAD_S);
        Duration::from_secs_f64(fill + points)
    }

    /// Fails, in one line, if the plan cannot fit `budget`.
    pub fn check_budget(&self, budget: Duration) -> Result<(), CalibrateError> {
        let need = self.estimate();
        if need > budget {
            return Err(CalibrateError::new(format!(
                "the plan needs at least {:.0} s ({} points of {} s + {} s ramp, and filling {}) but the budget is {:.0} s: \
                 give a larger --budget, --quick, or a smaller --plan",
                need.as_secs_f64().ceil(),
                self.point.len(),
                self.runtime,
                self.ramp,
                self.region,
                budget.as_secs_f64()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_plans_cover_the_ranges_and_check() {
        let p = Plan::default_plan();
        p.check().unwrap();
        let bs: Vec<u64> = p.point.iter().map(|p| p.bs.0).collect();
        assert_eq!(bs.iter().min(), Some(&4096));
        assert_eq!(bs.iter().max(), Some(&(1 << 20)));
        assert_eq!(p.point.iter().map(|p| p.iodepth).max(), Some(128));
        for rw in ["randread", "randwrite", "read", "write"] {
            assert!(p.point.iter().any(|p| p.rw == rw), "{rw}");
        }
        Plan::quick().check().unwrap();
        assert!(Plan::quick().estimate() < p.estimate());
    }

    #[test]
    fn a_plan_reads_from_toml_and_bad_ones_are_named() {
        let text =
            "region = '8MiB'\nruntime = 1\nramp = 0\n[[point]]\nrw = 'randread'\nbs = '4KiB'\niodepth = 2\n";
        let p = Plan::from_toml(text, "p.toml").unwrap();
        assert_eq!(p.point, vec![Point::new("randread", 4096, 2)]);
        let e = Plan::from_toml(&text.replace("randread", "trim"), "p.toml").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: point trim 4KiB qd2: rw must be"), "{e}");
        let e = Plan::from_toml("region = 3", "p.toml").unwrap_err().to_string();
        assert!(e.starts_with("p.toml: ") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn a_budget_too_small_is_refused_in_one_line() {
        let p = Plan::quick();
        p.check_budget(Duration::from_secs(60)).unwrap();
        let e = p.check_budget(Duration::from_secs(5)).unwrap_err().to_string();
        assert!(e.starts_with("the plan needs at least 12 s (6 points") && !e.contains('\n'), "{e}");
    }
}
