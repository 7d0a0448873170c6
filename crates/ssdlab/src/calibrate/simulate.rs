//! Simulating a plan: every point on its own device, built fresh from the configuration, its
//! region written sequentially first (as the measurement does), then the point's fio-like job
//! for a fixed number of commands. Points run in parallel, one per core, in this process.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use firmware::config::DeviceConfig;
use firmware::platform::StoreChoice;
use host::run::{RunOptions, run_jobs_with};
use host::workload::{IoOp, JobSpec};
use serde::{Deserialize, Serialize};

use super::CalibrateError;
use super::plan::{Plan, Point};
use crate::{Start, prepare_rig};

/// What the model predicts for one point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Predicted {
    /// Commands completed per second of simulated time.
    pub iops: f64,
    /// Mean latency, µs.
    pub mean_us: f64,
    /// 99th-percentile latency, µs.
    pub p99_us: f64,
}

fn job(name: &str, options: &[(&str, String)]) -> Result<JobSpec, CalibrateError> {
    let mut spec = JobSpec::new(name);
    for (k, v) in options {
        spec.set(k, Some(v)).map_err(|e| CalibrateError::new(format!("{name}: {k}={v}: {e}")))?;
    }
    Ok(spec)
}

/// Commands a simulated point runs: `ios`, and at least 32 per command in flight so that the
/// queue's filling at the start weighs little.
fn commands(point: &Point, ios: u64) -> u64 {
    ios.max(32 * u64::from(point.iodepth))
}

/// Simulates one point of `plan` on a fresh device of configuration `cfg`.
fn simulate_point(
    cfg: &DeviceConfig,
    plan: &Plan,
    point: &Point,
    ios: u64,
    seed: u64,
) -> Result<Predicted, CalibrateError> {
    let fail = |e: &(dyn std::error::Error + 'static)| {
        CalibrateError::new(format!("simulating {}: {}", point.label(), crate::message::one_line(e)))
    };
    let rig =
        prepare_rig(cfg, &StoreChoice::Metadata, seed, Start::Fresh, &mut |_, _| {}).map_err(|e| fail(&e))?;
    let region = plan.region.0.to_string();
    let common = |rw: &str, bs: String, qd: u32| {
        vec![
            ("rw", rw.to_string()),
            ("bs", bs),
            ("iodepth", qd.to_string()),
            ("numjobs", "1".to_string()),
            ("size", region.clone()),
            ("offset", "0".to_string()),
        ]
    };
    let fill = job("fill", &common("write", "1048576".into(), 16))?;
    let opts = RunOptions::default();
    run_jobs_with(rig.system(), &[fill], seed, &opts, &mut |_| {}).map_err(|e| fail(&e))?;
    let mut options = common(&point.rw, point.bs.0.to_string(), point.iodepth);
    options.push(("number_ios", commands(point, ios).to_string()));
    let spec = job("point", &options)?;
    let r = run_jobs_with(rig.system(), &[spec], seed, &opts, &mut |_| {}).map_err(|e| fail(&e))?;
    let op = r.op(if point.writes() { IoOp::Write } else { IoOp::Read });
    let seconds = r.window().as_secs_f64();
    if op.count == 0 || seconds <= 0.0 || op.errors > 0 {
        return Err(CalibrateError::new(format!(
            "simulating {}: {} commands completed, {} failed",
            point.label(),
            op.count,
            op.errors
        )));
    }
    Ok(Predicted {
        iops: op.count as f64 / seconds,
        mean_us: op.latency.mean() / 1e3,
        p99_us: op.latency.quantile(0.99) as f64 / 1e3,
    })
}

/// Simulates every point of `plan` (`ios` commands each, at least 32 per command in flight) on
/// `threads` threads; point `i` has seed `seed + i`, so the result does not depend on `threads`.
pub fn simulate_plan(
    cfg: &DeviceConfig,
    plan: &Plan,
    ios: u64,
    seed: u64,
    threads: usize,
) -> Result<Vec<Predicted>, CalibrateError> {
    let n = plan.point.len();
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<Predicted, CalibrateError>>>> =
        Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, n) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = simulate_point(cfg, plan, &plan.point[i], ios, seed.wrapping_add(i as u64));
                    out.lock().expect("no thread panics holding it")[i] = Some(r);
                }
            });
        }
    });
    out.into_inner()
        .expect("no thread panics holding it")
        .into_iter()
        .map(|r| r.expect("every point ran"))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// softssd, small, with a 1 MiB data cache (its own 512 MiB would hold the whole region,
    /// and reads would never reach the flash).
    pub(crate) fn small() -> DeviceConfig {
        let mut cfg = firmware::presets::get("softssd").unwrap().unwrap();
        crate::setup::set_blocks(&mut cfg, 16).unwrap();
        crate::setup::apply_settings(&cfg, &["ftl.cache.capacity=1MiB".parse().unwrap()]).unwrap()
    }

    #[test]
    fn a_plan_simulates_the_same_on_any_number_of_threads() {
        let cfg = small();
        let plan = Plan::quick();
        let one = simulate_plan(&cfg, &plan, 300, 7, 1).unwrap();
        let two = simulate_plan(&cfg, &plan, 300, 7, 2).unwrap();
        assert_eq!(one, two);
        for (p, r) in plan.point.iter().zip(&one) {
            assert!(r.iops > 0.0 && r.mean_us > 0.0 && r.p99_us >= r.mean_us * 0.5, "{}: {r:?}", p.label());
        }
        // A slower read shows in the reads' latency.
        let slow = crate::setup::apply_settings(&cfg, &["timing.t_read=208us".parse().unwrap()]).unwrap();
        let s = simulate_plan(&slow, &plan, 300, 7, 2).unwrap();
        assert!(s[0].mean_us > one[0].mean_us + 90.0, "{:?} vs {:?}", s[0], one[0]);
    }
}
