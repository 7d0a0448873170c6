//! Axes: ranges that start and end on a tick, "nice" tick steps (1, 2, 2.5, 5 x 10^k), log
//! axes, and tick labels that carry no float noise.
//!
//! Every axis is linear for plotters: a log axis holds `log10(value)` and labels its ticks
//! with `10^tick`, so the ticks are ours (1-2-5 per decade) rather than the library's.

/// One axis: its range, its ticks (also the grid lines), its description and how a tick
/// value is printed.
pub(crate) struct Axis {
    /// Lower end (log10 of the value on a log axis).
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Tick positions, within `lo..=hi`.
    pub ticks: Vec<f64>,
    /// Name and unit, e.g. `time (ms)`.
    pub desc: String,
    /// Tick label of a position.
    pub fmt: Box<dyn Fn(f64) -> String>,
}

/// How tick values are printed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Style {
    /// Plain numbers, with as many decimals as the step needs.
    Plain,
    /// Plain numbers with `k` / `M` suffixes when the ticks are large (IOPS).
    Si,
    /// Percentages of a 0..1 fraction (the range is in percent already).
    Percent,
}

/// Ticks wanted on an axis, roughly.
pub(crate) const TICKS: usize = 8;

/// A category axis is at least this many categories wide.
const MIN_SLOTS: usize = 5;

impl Axis {
    /// A linear axis from 0 to just above `max` (1 if `max` is not positive).
    pub fn from_zero(max: f64, desc: &str, style: Style) -> Axis {
        Axis::linear(0.0, max, desc, style)
    }

    /// A linear axis over `lo..hi` rounded outwards to ticks.
    pub fn linear(lo: f64, hi: f64, desc: &str, style: Style) -> Axis {
        let (lo, hi) = widen(lo, hi);
        let step = nice_step(hi - lo, TICKS);
        let first = (lo / step).floor() as i64;
        let last = (hi / step - 1e-9).ceil().max(first as f64 + 1.0) as i64;
        let ticks: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
        let top = ticks.iter().fold(0f64, |m, t| m.max(t.abs()));
        Axis {
            lo: first as f64 * step,
            hi: last as f64 * step,
            ticks,
            desc: desc.to_string(),
            fmt: formatter(step, top, style),
        }
    }

    /// A fixed axis with the given ticks and labels (e.g. the percentile nines).
    pub fn fixed(lo: f64, hi: f64, ticks: Vec<f64>, desc: &str, fmt: Box<dyn Fn(f64) -> String>) -> Axis {
        Axis { lo, hi, ticks, desc: desc.to_string(), fmt }
    }

    /// A log axis over positive values `min..max` (given as values, not logs): ticks at 1, 2
    /// and 5 per decade (only powers of ten over many decades, more over a narrow range),
    /// ends on ticks.
    pub fn log(min: f64, max: f64, desc: &str) -> Axis {
        let min = if min.is_finite() && min > 0.0 { min } else { 1e-3 };
        let max = if max.is_finite() && max > min { max } else { min * 10.0 };
        let candidates = log_candidates(min, max);
        let lo = candidates.iter().rev().find(|&&c| c <= min * (1.0 + 1e-9)).copied().unwrap_or(min);
        let hi = candidates.iter().find(|&&c| c >= max * (1.0 - 1e-9)).copied().unwrap_or(max);
        let mut ticks: Vec<f64> = candidates.into_iter().filter(|&c| c >= lo && c <= hi).collect();
        if ticks.len() < 3 {
            // A narrow range: linear ticks in value space.
            let step = nice_step(hi - lo, 5);
            let first = (lo / step).ceil() as i64;
            ticks =
                (first..).map(|k| k as f64 * step).take_while(|&t| t <= hi).filter(|&t| t > 0.0).collect();
        }
        let decades = (hi / lo).log10();
        if ticks.len() > 12 && decades >= 1.0 {
            ticks.retain(|&t| is_power_of_ten(t));
        }
        Axis {
            lo: lo.log10(),
            hi: hi.log10(),
            ticks: ticks.iter().map(|t| t.log10()).collect(),
            desc: desc.to_string(),
            fmt: Box::new(|v| thousands(10f64.powf(v))),
        }
    }

    /// An axis of integer categories `first..=last` (bars centred on them), ticked on whole
    /// numbers; `name` labels a tick (by default the number itself).
    pub fn categories(first: usize, last: usize, desc: &str, name: Option<Vec<String>>) -> Axis {
        let last = last.max(first);
        let step = nice_step((last - first) as f64, 12).round().max(1.0);
        let start = (first as f64 / step).ceil() * step;
        let ticks = (0..).map(|k| start + k as f64 * step).take_while(|&t| t <= last as f64).collect();
        let fmt: Box<dyn Fn(f64) -> String> = match name {
            Some(names) => Box::new(move |v| names.get(v.round() as usize).cloned().unwrap_or_default()),
            None => Box::new(|v| format!("{v:.0}")),
        };
        // Few categories get the room of MIN_SLOTS, so a lone bar is not a wall of colour.
        let pad = 0.6 + MIN_SLOTS.saturating_sub(last - first + 1) as f64 / 2.0;
        Axis { lo: first as f64 - pad, hi: last as f64 + pad, ticks, desc: desc.to_string(), fmt }
    }

    /// The label of tick `v`.
    pub fn label(&self, v: f64) -> String {
        (self.fmt)(v)
    }
}

/// A non-empty, finite range (a degenerate one is widened around its value).
fn widen(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo.is_finite() { lo } else { 0.0 };
    let hi = if hi.is_finite() { hi } else { lo };
    if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        let pad = lo.abs() * 0.5;
        (if lo > 0.0 { (lo - pad).max(0.0) } else { lo - pad }, lo + pad)
    }
}

/// A step of 1, 2, 2.5 or 5 x 10^k giving about `ticks` ticks over `span`.
pub(crate) fn nice_step(span: f64, ticks: usize) -> f64 {
    let raw = (span / ticks.max(1) as f64).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = match norm {
        n if n <= 1.0 => 1.0,
        n if n <= 2.0 => 2.0,
        n if n <= 2.5 => 2.5,
        n if n <= 5.0 => 5.0,
        _ => 10.0,
    };
    nice * mag
}

/// 1, 2 and 5 x 10^k from below `min` to above `max` (only powers of ten beyond 4 decades).
fn log_candidates(min: f64, max: f64) -> Vec<f64> {
    let (first, last) = (min.log10().floor() as i32, max.log10().ceil() as i32);
    let mantissas: &[f64] = if last - first > 4 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    let mut out = Vec::new();
    for e in first..=last {
        for m in mantissas {
            out.push(m * 10f64.powi(e));
        }
    }
    out
}

fn is_power_of_ten(v: f64) -> bool {
    let l = v.log10();
    (l - l.round()).abs() < 1e-9
}

/// Decimals needed to print multiples of `step` exactly.
fn decimals(step: f64) -> usize {
    let mut d = 0;
    while d < 6 && ((step * 10f64.powi(d as i32)).round() - step * 10f64.powi(d as i32)).abs() > 1e-6 {
        d += 1;
    }
    d
}

/// The tick formatter of a linear axis with step `step` whose largest tick is `top`.
fn formatter(step: f64, top: f64, style: Style) -> Box<dyn Fn(f64) -> String> {
    let (div, suffix) = match style {
        Style::Si if top >= 1e7 => (1e6, "M"),
        Style::Si if top >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let d = decimals(step / div);
    let percent = if style == Style::Percent { "%" } else { "" };
    Box::new(move |v| {
        if (v / step).round() == 0.0 {
            return format!("0{percent}");
        }
        if d == 0 && suffix.is_empty() {
            return format!("{}{percent}", thousands(v));
        }
        format!("{:.d$}{suffix}{percent}", v / div)
    })
}

/// A value with thousands separators (`12,500`), or up to 3 significant digits below 10.
pub(crate) fn thousands(v: f64) -> String {
    if v < 0.0 {
        return format!("-{}", thousands(-v));
    }
    if v < 10.0 {
        let s = format!("{v:.2}");
        return s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    report::grouped(v)
}

/// Simulated time on an x axis: milliseconds, or seconds for long runs. Returns the divisor
/// from ms and the axis.
pub(crate) fn time_axis(max_ms: f64) -> (f64, Axis) {
    if max_ms > 5000.0 {
        (1000.0, Axis::from_zero(max_ms / 1000.0, "simulated time (s)", Style::Plain))
    } else if max_ms < 2.0 {
        (1e-3, Axis::from_zero(max_ms * 1e3, "simulated time (us)", Style::Plain))
    } else {
        (1.0, Axis::from_zero(max_ms, "simulated time (ms)", Style::Plain))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_axes_end_on_ticks_and_print_without_noise() {
        let a = Axis::from_zero(19432.0, "IOPS", Style::Si);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 19432.0 && a.hi <= 22000.0, "{}", a.hi);
        let labels: Vec<String> = a.ticks.iter().map(|&t| a.label(t)).collect();
        assert_eq!(labels.first().unwrap(), "0");
        assert!(labels.contains(&"10.0k".to_string()) || labels.contains(&"10k".to_string()), "{labels:?}");
        let b = Axis::from_zero(0.3, "x", Style::Plain);
        assert_eq!(b.ticks.iter().map(|&t| b.label(t)).collect::<Vec<_>>().last().unwrap(), "0.30");
    }

    #[test]
    fn degenerate_ranges_are_widened() {
        for (lo, hi) in [(0.0, 0.0), (5.0, 5.0), (f64::NAN, f64::INFINITY), (-3.0, -3.0)] {
            let a = Axis::linear(lo, hi, "x", Style::Plain);
            assert!(a.hi > a.lo && a.ticks.len() >= 2, "{lo} {hi}: {} {}", a.lo, a.hi);
        }
    }

    #[test]
    fn log_axes_tick_on_one_two_five() {
        let a = Axis::log(235.0, 176_000.0, "us");
        assert_eq!(a.lo, 200f64.log10());
        assert_eq!(a.hi, 200_000f64.log10());
        let labels: Vec<String> = a.ticks.iter().map(|&t| a.label(t)).collect();
        assert!(
            labels.contains(&"1,000".to_string()) && labels.contains(&"100,000".to_string()),
            "{labels:?}"
        );
        // Narrow: linear ticks in value space.
        let n = Axis::log(68_000.0, 176_000.0, "us");
        assert!(n.ticks.len() >= 3, "{:?}", n.ticks);
        // Degenerate: one value.
        let d = Axis::log(5.0, 5.0, "us");
        assert!(d.hi > d.lo);
        let z = Axis::log(0.0, 0.0, "us");
        assert!(z.hi > z.lo && z.lo.is_finite());
    }

    #[test]
    fn categories_tick_whole_numbers() {
        let a = Axis::categories(10, 15, "erases", None);
        assert_eq!(a.ticks, vec![10.0, 11.0, 12.0, 13.0, 14.0, 15.0]);
        let b = Axis::categories(0, 63, "die", None);
        assert!(b.ticks.iter().all(|t| t.fract() == 0.0) && b.ticks.len() <= 13, "{:?}", b.ticks);
        let c = Axis::categories(0, 0, "core", Some(vec!["hil".into()]));
        assert_eq!((c.ticks.len(), c.label(0.0)), (1, "hil".to_string()));
        // A lone category sits in the middle of room for five.
        assert!((c.hi - c.lo - 5.2).abs() < 1e-9 && (c.lo + c.hi).abs() < 1e-9, "{} {}", c.lo, c.hi);
        let d = Axis::categories(3, 12, "x", None);
        assert_eq!((d.lo, d.hi), (2.4, 12.6));
    }

    #[test]
    fn time_axes_pick_a_readable_unit() {
        let (div, a) = time_axis(0.185);
        assert_eq!((div, a.desc.as_str()), (1e-3, "simulated time (us)"));
        assert!(a.hi >= 185.0 && a.hi <= 200.0, "{}", a.hi);
        assert_eq!(time_axis(4481.0).1.desc, "simulated time (ms)");
        let (div, s) = time_axis(8952.0);
        assert_eq!((div, s.desc.as_str(), s.hi), (1000.0, "simulated time (s)", 10.0));
    }

    #[test]
    fn log_ticks_over_many_decades_are_powers_of_ten() {
        let a = Axis::log(0.5, 2_000_000.0, "us");
        let labels: Vec<String> = a.ticks.iter().map(|&t| a.label(t)).collect();
        assert_eq!(
            labels,
            ["0.1", "1", "10", "100", "1,000", "10,000", "100,000", "1,000,000", "10,000,000"]
        );
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(1234567.0), "1,234,567");
        assert_eq!(thousands(100.0), "100");
        assert_eq!(thousands(0.5), "0.5");
        assert_eq!(thousands(2.0), "2");
        assert_eq!(thousands(-2500.0), "-2,500");
    }
}
