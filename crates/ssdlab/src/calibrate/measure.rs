//! Measuring a target with fio: the region is written sequentially once, then each point runs
//! for the plan's time after its ramp, and fio's JSON output gives its IOPS and its mean and
//! 99th-percentile total latency (`lat_ns`, submission to completion).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::CalibrateError;
use super::plan::{Plan, Point};
use super::target::Target;

/// What one point measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Commands completed per second.
    pub iops: f64,
    /// Mean latency, µs.
    pub mean_us: f64,
    /// 99th-percentile latency, µs.
    pub p99_us: f64,
    /// Commands completed in the measured time.
    pub ios: u64,
}

/// Every point of a plan, measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The target, as given.
    pub target: String,
    /// Its size, bytes.
    pub capacity: u64,
    /// The time dilation the measured times were divided by (IOPS multiplied by).
    pub dilation: f64,
    /// The plan.
    pub plan: Plan,
    /// One per point, in order.
    pub points: Vec<Measured>,
    /// Wall time of the measurement, seconds.
    pub seconds: f64,
}

/// The fio command for one job on `target` (`point` `None`: the sequential fill of the
/// region), writing JSON to `out`.
pub fn fio_command(fio: &Path, target: &Target, plan: &Plan, point: Option<&Point>, out: &Path) -> Command {
    let mut c = Command::new(fio);
    c.arg("--output-format=json").arg(format!("--output={}", out.display()));
    c.args(["--name=calibrate", "--direct=1", "--randrepeat=0", "--norandommap", "--group_reporting"]);
    c.args(["--lat_percentiles=1", "--percentile_list=99", "--offset=0"]);
    c.arg(format!("--size={}", plan.region.0));
    c.args(target.fio_args());
    match point {
        None => {
            c.args(["--rw=write", "--bs=1m", "--iodepth=16"]);
        }
        Some(p) => {
            c.arg(format!("--rw={}", p.rw))
                .arg(format!("--bs={}", p.bs.0))
                .arg(format!("--iodepth={}", p.iodepth));
            c.arg("--time_based").arg(format!("--runtime={}ms", (plan.runtime * 1000.0).round() as u64));
            c.arg(format!("--ramp_time={}ms", (plan.ramp * 1000.0).round() as u64));
        }
    }
    c
}

#[derive(Deserialize)]
struct FioOutput {
    jobs: Vec<FioJob>,
}

#[derive(Deserialize)]
struct FioJob {
    #[serde(default)]
    error: i64,
    read: FioDir,
    write: FioDir,
}

#[derive(Deserialize)]
struct FioDir {
    iops: f64,
    total_ios: u64,
    lat_ns: FioLat,
}

#[derive(Deserialize)]
struct FioLat {
    mean: f64,
    #[serde(default)]
    percentile: std::collections::BTreeMap<String, f64>,
}

/// The measurement of one direction (reads if `write` is false) from fio's JSON output (one
/// job, `group_reporting`); text before the JSON object (fio's notes) is skipped.
pub fn parse_fio(text: &str, write: bool) -> Result<Measured, String> {
    let start = text.find('{').ok_or("no JSON object in fio's output")?;
    let out: FioOutput = serde_json::from_str(&text[start..]).map_err(|e| format!("fio's JSON: {e}"))?;
    let job = out.jobs.first().ok_or("fio's JSON has no jobs")?;
    if job.error != 0 {
        return Err(format!("fio's job failed with error {}", job.error));
    }
    let dir = if write { &job.write } else { &job.read };
    if dir.total_ios == 0 {
        return Err("fio completed no commands".into());
    }
    let p99 = dir
        .lat_ns
        .percentile
        .iter()
        .find(|(k, _)| k.parse::<f64>().is_ok_and(|q| (q - 99.0).abs() < 1e-9))
        .map(|(_, v)| *v)
        .ok_or("fio's JSON has no 99th percentile of lat_ns (fio too old for --lat_percentiles?)")?;
    Ok(Measured { iops: dir.iops, mean_us: dir.lat_ns.mean / 1e3, p99_us: p99 / 1e3, ios: dir.total_ios })
}

/// Runs `plan` on `target` with fio (`scratch` holds fio's output), stopping with an error if
/// the wall time passes `budget`; measured times are divided by `dilation`. `progress` gets
/// one line before each step.
#[allow(clippy::too_many_arguments)] // each is one setting of the command line
pub fn measure(
    fio: &Path,
    target: &Target,
    capacity: u64,
    plan: &Plan,
    dilation: f64,
    budget: Duration,
    scratch: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Measurement, CalibrateError> {
    let started = Instant::now();
    let out = scratch.join("fio.json");
    let run = |point: Option<&Point>| -> Result<String, CalibrateError> {
        let _ = std::fs::remove_file(&out);
        let label = point.map_or("fill".to_string(), Point::label);
        let res = fio_command(fio, target, plan, point, &out)
            .output()
            .map_err(|e| CalibrateError::new(format!("running {}: {e}", fio.display())))?;
        if !res.status.success() {
            let msg = String::from_utf8_lossy(&res.stderr);
            let line = msg.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
            return Err(CalibrateError::new(format!(
                "{label}: fio exited with {}: {}",
                res.status,
                line.trim()
            )));
        }
        std::fs::read_to_string(&out)
            .map_err(|e| CalibrateError::new(format!("{label}: reading fio's output: {e}")))
    };
    progress(&format!("measure: filling {} of {} sequentially", plan.region, target.show()));
    run(None)?;
    let mut points = Vec::new();
    for (i, p) in plan.point.iter().enumerate() {
        let used = started.elapsed();
        if used > budget {
            return Err(CalibrateError::new(format!(
                "the budget of {:.0} s ran out after {i} of {} points: give a larger --budget or a smaller plan",
                budget.as_secs_f64(),
                plan.point.len()
            )));
        }
        progress(&format!(
            "measure: point {}/{}: {} ({:.0} s used)",
            i + 1,
            plan.point.len(),
            p.label(),
            used.as_secs_f64()
        ));
        let text = run(Some(p))?;
        let m =
            parse_fio(&text, p.writes()).map_err(|e| CalibrateError::new(format!("{}: {e}", p.label())))?;
        points.push(Measured {
            iops: m.iops * dilation,
            mean_us: m.mean_us / dilation,
            p99_us: m.p99_us / dilation,
            ios: m.ios,
        });
    }
    Ok(Measurement {
        target: target.show(),
        capacity,
        dilation,
        plan: plan.clone(),
        points,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields read, in the shape fio 3.33 writes them (`--lat_percentiles=1
    /// --percentile_list=99`), cut down; a note line before it as fio prints some.
    const SAMPLE: &str = r#"note: a preamble line
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {
      "jobname" : "calibrate",
      "error" : 0,
      "read" : {
        "io_bytes" : 40960, "iops" : 9800.5, "total_ios" : 10,
        "clat_ns" : { "mean" : 90000.0 },
        "lat_ns" : { "min" : 80000, "max" : 150000, "mean" : 101000.0,
                     "percentile" : { "99.000000" : 140288 } }
      },
      "write" : {
        "io_bytes" : 0, "iops" : 0.0, "total_ios" : 0,
        "lat_ns" : { "min" : 0, "max" : 0, "mean" : 0.0, "stddev" : 0.0, "N" : 0 }
      }
    }
  ]
}
"#;

    #[test]
    fn a_report_parses_into_iops_mean_and_p99() {
        let m = parse_fio(SAMPLE, false).unwrap();
        assert_eq!(m, Measured { iops: 9800.5, mean_us: 101.0, p99_us: 140.288, ios: 10 });
        assert_eq!(parse_fio(SAMPLE, true).unwrap_err(), "fio completed no commands");
        for (text, want) in
            [("", "no JSON"), ("{}", "fio's JSON: missing field"), ("{\"jobs\": []}", "no jobs")]
        {
            let e = parse_fio(text, false).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{text}: {e}");
        }
        let no_pct = SAMPLE.replace("\"percentile\" : { \"99.000000\" : 140288 }", "\"N\": 10");
        assert!(parse_fio(&no_pct, false).unwrap_err().contains("no 99th percentile"));
    }

    #[test]
    fn the_command_names_the_engine_and_the_job() {
        let plan = Plan::quick();
        let args = |t: &Target, p: Option<&Point>| {
            let c = fio_command(Path::new("fio"), t, &plan, p, Path::new("/tmp/o.json"));
            c.get_args().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>()
        };
        let a = args(&Target::Nbd("nbd://h".into()), Some(&plan.point[1]));
        for want in [
            "--ioengine=nbd",
            "--uri=nbd://h",
            "--rw=randread",
            "--bs=4096",
            "--iodepth=16",
            "--runtime=1000ms",
        ] {
            assert!(a.iter().any(|x| x == want), "{want} in {a:?}");
        }
        let a = args(&Target::Path("/dev/x".into()), None);
        assert!(a.iter().any(|x| x == "--ioengine=libaio") && a.iter().any(|x| x == "--rw=write"));
        assert!(!a.iter().any(|x| x == "--time_based"));
    }
}
