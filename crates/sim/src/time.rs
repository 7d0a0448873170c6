//! Virtual time: [`SimTime`] (an instant) and [`SimDuration`] (a span), both integer nanoseconds.
//!
//! Durations parse from and print as human units (`"50us"`, `"1.5ms"`, `"600ns"`, `"2s"`), so
//! configuration files read like a datasheet.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::units::{ParseQuantityError, parse_scaled};

/// An instant of virtual time: nanoseconds since the start of the simulation.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimTime(u64);

/// A span of virtual time in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of every simulation.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable instant (used as "never").
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// An instant `nanos` nanoseconds after the start.
    pub const fn from_nanos(nanos: u64) -> Self {
        SimTime(nanos)
    }

    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the start, as a float (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// The span since `earlier`, or zero if `earlier` is later than `self`.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }

    /// The span since `earlier`.
    ///
    /// # Panics
    /// If `earlier` is after `self`: time never runs backwards in a simulation.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        match self.0.checked_sub(earlier.0) {
            Some(d) => SimDuration(d),
            None => panic!("SimTime::since: {earlier} is after {self}"),
        }
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The largest representable span.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// A span of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: u64) -> Self {
        SimDuration(nanos)
    }
    /// A span of `micros` microseconds.
    pub const fn from_micros(micros: u64) -> Self {
        SimDuration(micros * 1_000)
    }
    /// A span of `millis` milliseconds.
    pub const fn from_millis(millis: u64) -> Self {
        SimDuration(millis * 1_000_000)
    }
    /// A span of `secs` seconds.
    pub const fn from_secs(secs: u64) -> Self {
        SimDuration(secs * 1_000_000_000)
    }
    /// A span of `secs` seconds, rounded to the nearest nanosecond (negative and NaN clamp to 0).
    pub fn from_secs_f64(secs: f64) -> Self {
        if secs.is_nan() || secs <= 0.0 {
            return SimDuration(0);
        }
        SimDuration((secs * 1e9).round().min(u64::MAX as f64) as u64)
    }
    /// The span in nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// The span in microseconds, as a float (for reports only).
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    /// The span in seconds, as a float (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Whether the span is zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// `self * n`, saturating at [`SimDuration::MAX`].
    pub const fn saturating_mul(self, n: u64) -> Self {
        SimDuration(self.0.saturating_mul(n))
    }
    /// `self + other`, saturating at [`SimDuration::MAX`].
    pub const fn saturating_add(self, other: SimDuration) -> Self {
        SimDuration(self.0.saturating_add(other.0))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        self.saturating_add(d)
    }
}

impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}

impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(d.0))
    }
}

impl Mul<u64> for SimDuration {
    type Output = SimDuration;
    fn mul(self, n: u64) -> SimDuration {
        self.saturating_mul(n)
    }
}

impl std::iter::Sum for SimDuration {
    fn sum<I: Iterator<Item = SimDuration>>(iter: I) -> SimDuration {
        iter.fold(SimDuration::ZERO, |a, b| a + b)
    }
}

const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
];

impl FromStr for SimDuration {
    type Err = ParseQuantityError;

    /// Parses `"<number><unit>"` with unit `ns`, `us` (or `µs`), `ms`, `s`, `min`, `h` or `d`
    /// (days); a bare `0` is accepted. Fractions round to the nearest nanosecond.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "0" {
            return Ok(SimDuration::ZERO);
        }
        parse_scaled(s, UNITS, "a duration such as 50us, 1.5ms or 600ns").map(SimDuration)
    }
}

impl fmt::Display for SimDuration {
    /// Prints in the largest unit not above the value (s, ms, us, ns), exactly: trailing zeros
    /// are dropped, no digit is lost (`1.5ms`, `486.7479ms`, `600ns`), so it parses back to the
    /// same value. Use `{:#}` for three significant decimals in reports (`486.748ms`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        let (div, unit, digits) = match n {
            0 => return f.write_str("0ns"),
            n if n >= 1_000_000_000 => (1_000_000_000, "s", 9),
            n if n >= 1_000_000 => (1_000_000, "ms", 6),
            n if n >= 1_000 => (1_000, "us", 3),
            _ => (1, "ns", 0),
        };
        let (whole, frac) = (n / div, n % div);
        if f.alternate() {
            let v = n as f64 / div as f64;
            let s = format!("{v:.3}");
            return write!(f, "{}{unit}", s.trim_end_matches('0').trim_end_matches('.'));
        }
        if frac == 0 {
            return write!(f, "{whole}{unit}");
        }
        let frac = format!("{frac:0digits$}");
        write!(f, "{whole}.{}{unit}", frac.trim_end_matches('0'))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", SimDuration(self.0))
    }
}

impl Serialize for SimDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SimDuration {
    /// Accepts a unit string (`"50us"`) or an integer number of nanoseconds.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Nanos(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Nanos(n) => Ok(SimDuration(n)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Serde helpers for a [`SimDuration`] written as an integer number of nanoseconds (reports
/// meant for programs): `#[serde(with = "sim::time::as_nanos")]`. Reading also accepts a unit
/// string.
pub mod as_nanos {
    use super::SimDuration;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the duration as nanoseconds.
    pub fn serialize<S: Serializer>(d: &SimDuration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.0)
    }

    /// Reads nanoseconds or a unit string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimDuration, D::Error> {
        SimDuration::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_datasheet_units() {
        assert_eq!("50us".parse::<SimDuration>().unwrap(), SimDuration::from_micros(50));
        assert_eq!("1.5ms".parse::<SimDuration>().unwrap(), SimDuration::from_micros(1500));
        assert_eq!("600 ns".parse::<SimDuration>().unwrap(), SimDuration::from_nanos(600));
        assert_eq!("2s".parse::<SimDuration>().unwrap(), SimDuration::from_secs(2));
        assert_eq!("0".parse::<SimDuration>().unwrap(), SimDuration::ZERO);
        // Retention and refresh periods: minutes, hours, days.
        assert_eq!("90min".parse::<SimDuration>().unwrap(), SimDuration::from_secs(5400));
        assert_eq!("1.5h".parse::<SimDuration>().unwrap(), SimDuration::from_secs(5400));
        assert_eq!("30d".parse::<SimDuration>().unwrap(), SimDuration::from_secs(30 * 86_400));
        assert!("50".parse::<SimDuration>().is_err());
        assert!("-3us".parse::<SimDuration>().is_err());
        assert!("3 parsecs".parse::<SimDuration>().is_err());
    }

    #[test]
    fn displays_compactly() {
        assert_eq!(SimDuration::from_micros(50).to_string(), "50us");
        assert_eq!(SimDuration::from_micros(1500).to_string(), "1.5ms");
        assert_eq!(SimDuration::from_millis(3).to_string(), "3ms");
        assert_eq!(SimDuration::from_nanos(1234).to_string(), "1.234us");
        assert_eq!(SimDuration::from_secs(2).to_string(), "2s");
        assert_eq!(SimDuration::from_nanos(486_747_900).to_string(), "486.7479ms");
        assert_eq!(format!("{:#}", SimDuration::from_nanos(486_747_900)), "486.748ms");
        assert_eq!(SimDuration::from_nanos(1_000_000_001).to_string(), "1.000000001s");
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(n in 0u64..10_000_000_000_000) {
            let d = SimDuration::from_nanos(n);
            let back: SimDuration = d.to_string().parse().unwrap();
            // Display never drops a digit.
            prop_assert_eq!(back, d);
        }
    }
}
