//! The two PTS tests over an [`Executor`]: purge, precondition, rounds until steady state
//! (IOPS), and 4 KiB random writes until the device is written several times over (WSAT).

use serde::Serialize;

use super::executor::{Executor, Measured, PtsError};
use super::plan::{BLOCK_SIZES, READ_PCTS, Settings, TRACKING, bs_label, mix_label};
use super::steady::{self, Window};

/// What the run reports as it goes (progress lines on stderr, a bar).
pub trait Observer {
    /// A one-line note (purge, preconditioning, a round's tracking value).
    fn note(&mut self, line: &str);
    /// Step `done` of `total` of the current phase has started.
    fn step(&mut self, done: u64, total: u64);
    /// What a test has measured so far: the IOPS test's rounds after each round, or the
    /// WSAT's intervals after each interval (the other empty). For keeping them should the run
    /// be interrupted; by default nothing is done with them.
    fn measured(&mut self, _rounds: &[Round], _intervals: &[Interval]) {}
}

/// One point of an IOPS round.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Read percentage of its mix.
    pub read_pct: u32,
    /// Block size, bytes.
    pub bs: u64,
    /// What it measured.
    pub measured: Measured,
}

/// One IOPS round: all 56 points.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Round {
    /// Its number (1-based).
    pub round: usize,
    /// The tracking variable: 4 KiB 100% write IOPS.
    pub tracking_iops: f64,
    /// Its points, mix by mix, block sizes within.
    pub points: Vec<Point>,
}

/// One cell of the reported IOPS table: a mix and block size averaged over the window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// Read percentage.
    pub read_pct: u32,
    /// Block size, bytes.
    pub bs: u64,
    /// Mean total IOPS over the window's rounds.
    pub iops: f64,
}

/// The IOPS test's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IopsResult {
    /// What the purge did.
    pub purge: String,
    /// The workload-independent preconditioning (sequential 128 KiB writes).
    pub preconditioning: Measured,
    /// Every round run.
    pub rounds: Vec<Round>,
    /// Whether steady state was reached within the most rounds.
    pub steady_state: bool,
    /// The measurement window: where steady state was reached, else the last five rounds
    /// (with the criteria that failed); absent with fewer than five rounds.
    pub window: Option<Window>,
    /// Each mix and block size averaged over the window's rounds (over every round run if
    /// there is no window).
    pub table: Vec<Cell>,
}

/// One WSAT interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// Its number (1-based).
    pub index: usize,
    /// Test time at its end, seconds from the start of the writes.
    pub time_s: f64,
    /// Total bytes written by its end (TGBW, in bytes).
    pub bytes_written: u64,
    /// Its IOPS.
    pub iops: f64,
}

/// The write-saturation test's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WsatResult {
    /// What the purge did.
    pub purge: String,
    /// Every interval.
    pub intervals: Vec<Interval>,
    /// Bytes the test set out to write (the capacity multiple).
    pub target_bytes: u64,
    /// Why it stopped: `capacity` (target written) or `time` (the time cap).
    pub stopped_by: String,
    /// Mean IOPS of the first interval (fresh device).
    pub first_iops: f64,
    /// Mean IOPS over the last fifth of the intervals (at least one): the saturated level.
    pub final_iops: f64,
    /// The lowest interval's IOPS.
    pub min_iops: f64,
}

/// Runs the IOPS test: purge, preconditioning, then rounds until steady state or the most
/// rounds.
pub fn iops_test(
    ex: &mut dyn Executor,
    s: &Settings,
    obs: &mut dyn Observer,
) -> Result<IopsResult, PtsError> {
    let purge = ex.purge()?;
    obs.note(&format!("IOPS test: purge: {purge}"));
    obs.note(&format!(
        "IOPS test: preconditioning: sequential 128 KiB writes, {}x the user capacity ({} bytes)",
        s.precondition_loops,
        ex.capacity()
    ));
    obs.step(0, 1);
    let preconditioning = ex.run(&s.wipc())?;
    let per_round = (READ_PCTS.len() * BLOCK_SIZES.len()) as u64;
    let mut rounds: Vec<Round> = Vec::new();
    let mut window = None;
    for round in 1..=s.max_rounds {
        let mut points = Vec::with_capacity(per_round as usize);
        for &read_pct in &READ_PCTS {
            for &bs in &BLOCK_SIZES {
                obs.step(points.len() as u64, per_round);
                let label = format!("IOPS round {round}, {} {}", mix_label(read_pct), bs_label(bs));
                let measured = ex.run(&s.point(label, read_pct, bs))?;
                points.push(Point { read_pct, bs, measured });
            }
        }
        let tracking_iops = points
            .iter()
            .find(|p| (p.bs, p.read_pct) == TRACKING)
            .map(|p| p.measured.iops())
            .unwrap_or_default();
        rounds.push(Round { round, tracking_iops, points });
        obs.measured(&rounds, &[]);
        let series: Vec<f64> = rounds.iter().map(|r| r.tracking_iops).collect();
        window = steady::last_window(&series);
        let verdict = match &window {
            None => format!("(a window needs {} rounds)", steady::WINDOW),
            Some(w) => format!(
                "window {}-{}: range {:.1}% (<= 20%: {}), fit excursion {:.1}% (<= 10%: {})",
                w.first_round,
                w.last_round,
                100.0 * w.range / w.average.max(f64::MIN_POSITIVE),
                yes(w.range_ok),
                100.0 * w.slope_excursion / w.average.max(f64::MIN_POSITIVE),
                yes(w.slope_ok)
            ),
        };
        obs.note(&format!(
            "IOPS round {round}/{}: 4 KiB write {:.0} IOPS; {verdict}",
            s.max_rounds, tracking_iops
        ));
        if window.as_ref().is_some_and(Window::steady) {
            break;
        }
    }
    let steady_state = window.as_ref().is_some_and(Window::steady);
    let from = window.as_ref().map(|w| w.first_round).unwrap_or(1);
    let table = average_table(&rounds[from - 1..]);
    Ok(IopsResult { purge, preconditioning, rounds, steady_state, window, table })
}

fn yes(b: bool) -> &'static str {
    if b { "met" } else { "not met" }
}

/// Each mix and block size's mean total IOPS over `rounds`.
fn average_table(rounds: &[Round]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &read_pct in &READ_PCTS {
        for &bs in &BLOCK_SIZES {
            let vals: Vec<f64> = rounds
                .iter()
                .flat_map(|r| &r.points)
                .filter(|p| p.read_pct == read_pct && p.bs == bs)
                .map(|p| p.measured.iops())
                .collect();
            let iops = if vals.is_empty() { 0.0 } else { vals.iter().sum::<f64>() / vals.len() as f64 };
            cells.push(Cell { read_pct, bs, iops });
        }
    }
    cells
}

/// Runs the write-saturation test: purge, then 4 KiB random writes in intervals of the point
/// time until the capacity multiple is written or the time cap passes.
pub fn wsat_test(
    ex: &mut dyn Executor,
    s: &Settings,
    obs: &mut dyn Observer,
) -> Result<WsatResult, PtsError> {
    let purge = ex.purge()?;
    obs.note(&format!("WSAT: purge: {purge}"));
    let target_bytes = (ex.capacity() as f64 * s.wsat_capacity_multiple) as u64;
    let max_intervals = (s.wsat_max_seconds / s.point_seconds).ceil().max(1.0) as usize;
    obs.note(&format!(
        "WSAT: 4 KiB random writes until {} bytes ({}x the user capacity) or {} intervals",
        target_bytes,
        super::plan::trim_float(s.wsat_capacity_multiple),
        max_intervals
    ));
    let (mut time_s, mut written) = (0.0, 0u64);
    let mut intervals = Vec::new();
    let mut stopped_by = "time";
    for index in 1..=max_intervals {
        obs.step(written.min(target_bytes), target_bytes);
        let m = ex.run(&s.wsat_interval(index))?;
        time_s += m.seconds;
        written += m.bytes_written;
        intervals.push(Interval { index, time_s, bytes_written: written, iops: m.iops() });
        obs.measured(&[], &intervals);
        if index % 10 == 0 || written >= target_bytes {
            obs.note(&format!(
                "WSAT interval {index}: {:.0} IOPS, {:.2}x the capacity written",
                m.iops(),
                written as f64 / ex.capacity() as f64
            ));
        }
        if written >= target_bytes {
            stopped_by = "capacity";
            break;
        }
        if m.bytes_written == 0 {
            return Err(PtsError::Step {
                job: format!("WSAT interval {index}"),
                reason: "no writes completed in a whole interval".into(),
            });
        }
    }
    let iops: Vec<f64> = intervals.iter().map(|i| i.iops).collect();
    let tail = (iops.len() / 5).max(1);
    let final_iops = iops[iops.len() - tail..].iter().sum::<f64>() / tail as f64;
    Ok(WsatResult {
        purge,
        target_bytes,
        stopped_by: stopped_by.into(),
        first_iops: iops[0],
        final_iops,
        min_iops: iops.iter().copied().fold(f64::INFINITY, f64::min),
        intervals,
    })
}
