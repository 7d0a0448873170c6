//! What the PTS tests run: the IOPS test's R/W mixes and block sizes, and each step as a fio
//! job that both executors understand.

use std::fmt;

use serde::Serialize;

/// Read percentages of the IOPS test's R/W mixes, in the order a round runs them (PTS-E 7.2:
/// 100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100).
pub const READ_PCTS: [u32; 7] = [100, 95, 65, 50, 35, 5, 0];

/// The IOPS test's block sizes in bytes, in the order a round runs them within each mix
/// (1024, 128, 64, 32, 16, 8, 4 KiB and 512 B).
pub const BLOCK_SIZES: [u64; 8] = [1 << 20, 128 << 10, 64 << 10, 32 << 10, 16 << 10, 8 << 10, 4 << 10, 512];

/// The tracking variable's block size (4 KiB) and read percentage (0: 100% writes).
pub const TRACKING: (u64, u32) = (4 << 10, 0);

/// A block size as the PTS tables write it: `1024 KiB`, `4 KiB`, `0.5 KiB`.
pub fn bs_label(bs: u64) -> String {
    if bs < 1024 { format!("{} KiB", bs as f64 / 1024.0) } else { format!("{} KiB", bs >> 10) }
}

/// A R/W mix as the PTS tables write it: `65/35`.
pub fn mix_label(read_pct: u32) -> String {
    format!("{read_pct}/{}", 100 - read_pct)
}

/// How long (or how much) a step runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// A fixed time, in seconds (simulated time on a simulated device).
    Seconds(f64),
    /// Until each job has transferred the region this many times.
    Loops(u32),
}

/// One step of a test: a fio job over the whole device.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// What the job is, for progress lines and errors (`IOPS round 3, 65/35 4 KiB`).
    pub label: String,
    /// fio's `rw`: randrw, write, randwrite or trim.
    pub rw: &'static str,
    /// Read percentage for randrw.
    pub read_pct: u32,
    /// Block size in bytes.
    pub bs: u64,
    /// Jobs (fio's numjobs).
    pub threads: u32,
    /// Commands in flight per job.
    pub iodepth: u32,
    /// How long it runs.
    pub limit: Limit,
}

impl Job {
    /// The job as fio options (`key`, `value`), the same for the simulator and for fio.
    pub fn options(&self) -> Vec<(&'static str, String)> {
        let mut o = vec![
            ("rw", self.rw.to_string()),
            ("bs", self.bs.to_string()),
            ("numjobs", self.threads.to_string()),
            ("iodepth", self.iodepth.to_string()),
            ("size", "100%".to_string()),
        ];
        if self.rw == "randrw" {
            o.push(("rwmixread", self.read_pct.to_string()));
        }
        match self.limit {
            Limit::Seconds(s) => {
                o.push(("runtime", format!("{}ms", (s * 1000.0).round().max(1.0) as u64)));
                o.push(("time_based", "1".to_string()));
            }
            Limit::Loops(n) => o.push(("loops", n.to_string())),
        }
        o
    }
}

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opts: Vec<String> = self.options().iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, "{}", opts.join(" "))
    }
}

/// The settings of a PTS run, after validation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// Seconds each IOPS-test point and each WSAT interval runs (PTS: 60).
    pub point_seconds: f64,
    /// Most IOPS-test rounds (PTS: 25).
    pub max_rounds: usize,
    /// Jobs (thread count, TC).
    pub threads: u32,
    /// Commands in flight per job (queue depth, QD).
    pub iodepth: u32,
    /// Run the IOPS test.
    pub iops: bool,
    /// Run the write-saturation test.
    pub wsat: bool,
    /// WSAT stops after writing this many times the user capacity (PTS: 4).
    pub wsat_capacity_multiple: f64,
    /// WSAT also stops after this many seconds of test time (PTS: 24 hours).
    pub wsat_max_seconds: f64,
    /// Times the user capacity written by sequential 128 KiB writes before the IOPS test
    /// (PTS: 2).
    pub precondition_loops: u32,
}

/// The spec's point (and WSAT interval) time, seconds.
pub const SPEC_POINT_SECONDS: f64 = 60.0;
/// The spec's most rounds.
pub const SPEC_MAX_ROUNDS: usize = 25;

impl Settings {
    /// Checks the settings, with a one-line reason for the first that makes no sense.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.point_seconds.is_finite() && self.point_seconds > 0.0) {
            return Err("--point-time must be above zero".into());
        }
        if self.max_rounds == 0 {
            return Err("--max-rounds must be at least 1 (the PTS runs up to 25)".into());
        }
        if self.threads == 0 || self.iodepth == 0 {
            return Err("--threads and --iodepth must be at least 1".into());
        }
        if !(self.wsat_capacity_multiple.is_finite() && self.wsat_capacity_multiple > 0.0) {
            return Err("--wsat-capacity-multiple must be above zero".into());
        }
        if !(self.wsat_max_seconds.is_finite() && self.wsat_max_seconds > 0.0) {
            return Err("--wsat-max-time must be above zero".into());
        }
        if !self.iops && !self.wsat {
            return Err("nothing to run".into());
        }
        Ok(())
    }

    /// Where these settings depart from the spec, one sentence each.
    pub fn departures(&self) -> Vec<String> {
        let mut d = Vec::new();
        if self.point_seconds != SPEC_POINT_SECONDS {
            d.push(format!(
                "each IOPS point and WSAT interval runs {} s, not the spec's 60 s",
                trim_float(self.point_seconds)
            ));
        }
        if self.iops && self.max_rounds < SPEC_MAX_ROUNDS {
            d.push(format!("at most {} rounds, not the spec's 25", self.max_rounds));
        }
        if self.iops && self.max_rounds > SPEC_MAX_ROUNDS {
            d.push(format!("up to {} rounds, beyond the spec's 25", self.max_rounds));
        }
        if self.wsat && self.wsat_capacity_multiple != 4.0 {
            d.push(format!(
                "WSAT writes {}x the user capacity, not the spec's 4x",
                trim_float(self.wsat_capacity_multiple)
            ));
        }
        if self.wsat && self.wsat_max_seconds < 24.0 * 3600.0 {
            d.push(format!(
                "WSAT stops after {} s at most, not the spec's 24 h",
                trim_float(self.wsat_max_seconds)
            ));
        }
        d
    }

    /// Step `label` at `bs` and `read_pct` for one point time.
    pub fn point(&self, label: String, read_pct: u32, bs: u64) -> Job {
        Job {
            label,
            rw: "randrw",
            read_pct,
            bs,
            threads: self.threads,
            iodepth: self.iodepth,
            limit: Limit::Seconds(self.point_seconds),
        }
    }

    /// The workload-independent preconditioning: sequential 128 KiB writes over the whole
    /// device, `precondition_loops` times, one job at the total queue depth (several sequential
    /// jobs would each write the whole device).
    pub fn wipc(&self) -> Job {
        Job {
            label: "preconditioning".into(),
            rw: "write",
            read_pct: 0,
            bs: 128 << 10,
            threads: 1,
            iodepth: self.threads * self.iodepth,
            limit: Limit::Loops(self.precondition_loops),
        }
    }

    /// One WSAT interval: 4 KiB random writes for one point time.
    pub fn wsat_interval(&self, index: usize) -> Job {
        Job {
            label: format!("WSAT interval {index}"),
            rw: "randwrite",
            read_pct: 0,
            bs: 4 << 10,
            threads: self.threads,
            iodepth: self.iodepth,
            limit: Limit::Seconds(self.point_seconds),
        }
    }
}

/// `0.25`, `60`: a float without trailing zeros.
pub fn trim_float(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            point_seconds: 60.0,
            max_rounds: 25,
            threads: 4,
            iodepth: 32,
            iops: true,
            wsat: true,
            wsat_capacity_multiple: 4.0,
            wsat_max_seconds: 86400.0,
            precondition_loops: 2,
        }
    }

    #[test]
    fn the_spec_settings_depart_from_nothing() {
        let s = settings();
        assert_eq!(s.validate(), Ok(()));
        assert!(s.departures().is_empty());
        let short = Settings { point_seconds: 0.25, ..s };
        assert_eq!(
            short.departures(),
            ["each IOPS point and WSAT interval runs 0.25 s, not the spec's 60 s"]
        );
    }

    #[test]
    fn nonsense_is_refused() {
        assert!(Settings { max_rounds: 0, ..settings() }.validate().unwrap_err().contains("--max-rounds"));
        assert!(
            Settings { point_seconds: 0.0, ..settings() }.validate().unwrap_err().contains("--point-time")
        );
    }

    #[test]
    fn jobs_are_fio_options() {
        let s = settings();
        assert_eq!(
            s.point("p".into(), 65, 4096).to_string(),
            "rw=randrw bs=4096 numjobs=4 iodepth=32 size=100% rwmixread=65 runtime=60000ms time_based=1"
        );
        assert_eq!(s.wipc().to_string(), "rw=write bs=131072 numjobs=1 iodepth=128 size=100% loops=2");
        assert_eq!(bs_label(512), "0.5 KiB");
        assert_eq!(bs_label(1 << 20), "1024 KiB");
    }
}

/// Seconds from a duration such as `60`, `60s`, `500ms`, `10m` or `24h` (`flag` names it in
/// the error).
pub fn parse_seconds(flag: &str, s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("{flag}: '{s}' is not a duration such as 60s, 500ms, 10m or 24h")),
    };
    let v: f64 =
        num.parse().map_err(|_| format!("{flag}: '{s}' is not a duration such as 60s, 500ms, 10m or 24h"))?;
    Ok(v * scale)
}

#[cfg(test)]
mod duration_tests {
    use super::parse_seconds;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_seconds("--x", "60"), Ok(60.0));
        assert_eq!(parse_seconds("--x", "250ms"), Ok(0.25));
        assert_eq!(parse_seconds("--x", "24h"), Ok(86400.0));
        assert_eq!(parse_seconds("--x", "1.5m"), Ok(90.0));
        assert!(parse_seconds("--x", "fast").unwrap_err().starts_with("--x: 'fast'"));
        assert!(parse_seconds("--x", "3 weeks").is_err());
    }
}
