//! Quantities with units as they appear in datasheets and config files: [`ByteSize`]
//! (`"16KiB"`, `"512GiB"`) and [`Frequency`] (`"1.2GHz"`). Both print back in the same form.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A config or command-line quantity that did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value `{input}`: expected {expected}")]
pub struct ParseQuantityError {
    /// What the user wrote.
    pub input: String,
    /// What would have been accepted.
    pub expected: &'static str,
}

/// Parses `"<decimal number><unit>"` (white space allowed between) into an integer count of the
/// base unit, rounding fractions to the nearest base unit. Units match case-insensitively.
pub(crate) fn parse_scaled(
    input: &str,
    units: &[(&str, u64)],
    expected: &'static str,
) -> Result<u64, ParseQuantityError> {
    let err = || ParseQuantityError { input: input.to_string(), expected };
    let s = input.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = (&s[..split], s[split..].trim());
    let scale = units
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(unit))
        .map(|&(_, scale)| scale)
        .ok_or_else(err)?;
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() || frac.len() > 18 {
        return Err(err());
    }
    let digits: u128 = format!("{int}{frac}").parse().map_err(|_| err())?;
    let denom = 10u128.pow(frac.len() as u32);
    let value = digits.checked_mul(scale as u128).ok_or_else(err)? + denom / 2;
    u64::try_from(value / denom).map_err(|_| err())
}

/// A size in bytes, written with binary (`KiB`, `MiB`, ...) or decimal (`KB`, `MB`, ...) units.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

const BYTE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("PiB", 1 << 50),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
];

impl ByteSize {
    /// `n` bytes.
    pub const fn b(n: u64) -> Self {
        ByteSize(n)
    }
    /// `n` KiB.
    pub const fn kib(n: u64) -> Self {
        ByteSize(n << 10)
    }
    /// `n` MiB.
    pub const fn mib(n: u64) -> Self {
        ByteSize(n << 20)
    }
    /// `n` GiB.
    pub const fn gib(n: u64) -> Self {
        ByteSize(n << 30)
    }
    /// The size in bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl FromStr for ByteSize {
    type Err = ParseQuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().chars().all(|c| c.is_ascii_digit()) && !s.trim().is_empty() {
            return parse_scaled(s, &[("", 1)], "a size").map(ByteSize);
        }
        parse_scaled(s, BYTE_UNITS, "a size such as 16KiB, 512GiB or 4096B").map(ByteSize)
    }
}

impl fmt::Display for ByteSize {
    /// The largest binary unit that divides the size exactly (`16KiB`, `1872B`); with `{:#}`,
    /// the largest unit not above the size, rounded to 3 significant digits (`1.00TiB`,
    /// `1.50GiB`, `871MiB`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if f.alternate() {
            let (unit, scale) =
                BYTE_UNITS[1..6].iter().rev().find(|&&(_, s)| n >= s).copied().unwrap_or(("B", 1));
            let v = n as f64 / scale as f64;
            let text = if scale == 1 {
                format!("{n}B")
            } else if v < 10.0 {
                format!("{v:.2}{unit}")
            } else if v < 100.0 {
                format!("{v:.1}{unit}")
            } else {
                format!("{v:.0}{unit}")
            };
            return f.pad(&text);
        }
        for &(unit, scale) in BYTE_UNITS[1..6].iter().rev() {
            if n >= scale && n.is_multiple_of(scale) {
                return write!(f, "{}{unit}", n / scale);
            }
        }
        write!(f, "{n}B")
    }
}

/// A clock frequency in hertz (`"1.2GHz"`, `"400MHz"`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Frequency(pub u64);

const FREQ_UNITS: &[(&str, u64)] = &[("Hz", 1), ("kHz", 1_000), ("MHz", 1_000_000), ("GHz", 1_000_000_000)];

impl Frequency {
    /// `n` megahertz.
    pub const fn mhz(n: u64) -> Self {
        Frequency(n * 1_000_000)
    }
    /// The frequency in hertz.
    pub const fn hz(self) -> u64 {
        self.0
    }
}

impl FromStr for Frequency {
    type Err = ParseQuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_scaled(s, FREQ_UNITS, "a frequency such as 1.2GHz or 400MHz").map(Frequency)
    }
}

impl fmt::Display for Frequency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for &(unit, scale) in FREQ_UNITS.iter().rev() {
            if n >= scale && n.is_multiple_of((scale / 1000).max(1)) {
                let v = n as f64 / scale as f64;
                let s = format!("{v:.3}");
                return write!(f, "{}{unit}", s.trim_end_matches('0').trim_end_matches('.'));
            }
        }
        write!(f, "{n}Hz")
    }
}

macro_rules! string_serde {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            /// Accepts a unit string or a bare integer in the base unit.
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum Raw {
                    Int(u64),
                    Text(String),
                }
                match Raw::deserialize(d)? {
                    Raw::Int(n) => Ok(Self(n)),
                    Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
                }
            }
        }
    };
}
string_serde!(ByteSize);
string_serde!(Frequency);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn byte_sizes() {
        assert_eq!("16KiB".parse::<ByteSize>().unwrap(), ByteSize::kib(16));
        assert_eq!("16 kib".parse::<ByteSize>().unwrap(), ByteSize::kib(16));
        assert_eq!("1872B".parse::<ByteSize>().unwrap(), ByteSize(1872));
        assert_eq!("4096".parse::<ByteSize>().unwrap(), ByteSize(4096));
        assert_eq!("1.5GiB".parse::<ByteSize>().unwrap(), ByteSize(3 << 29));
        assert_eq!("2TB".parse::<ByteSize>().unwrap(), ByteSize(2_000_000_000_000));
        assert!("16 furlongs".parse::<ByteSize>().is_err());
        assert!("KiB".parse::<ByteSize>().is_err());
        assert!("99999999999PiB".parse::<ByteSize>().is_err());
        assert_eq!(ByteSize::gib(512).to_string(), "512GiB");
        assert_eq!(ByteSize(1872).to_string(), "1872B");
        assert_eq!(format!("{:#}", ByteSize(1872)), "1.83KiB");
        assert_eq!(format!("{:#}", ByteSize(1049088 << 20)), "1.00TiB");
        assert_eq!(format!("{:#}", ByteSize(1538 << 20)), "1.50GiB");
        assert_eq!(format!("{:#}", ByteSize(871 << 20)), "871MiB");
        assert_eq!(format!("{:#}", ByteSize(17)), "17B");
        assert_eq!(format!("{:>8}", format!("{:#}", ByteSize(17))), "     17B");
    }

    #[test]
    fn frequencies() {
        assert_eq!("1.2GHz".parse::<Frequency>().unwrap(), Frequency(1_200_000_000));
        assert_eq!("400MHz".parse::<Frequency>().unwrap(), Frequency::mhz(400));
        assert_eq!(Frequency(1_200_000_000).to_string(), "1.2GHz");
        assert_eq!(Frequency::mhz(400).to_string(), "400MHz");
    }

    proptest! {
        #[test]
        fn byte_size_round_trip(n in 0u64..(1u64 << 55)) {
            let b = ByteSize(n);
            prop_assert_eq!(b.to_string().parse::<ByteSize>().unwrap(), b);
        }

        #[test]
        fn parser_never_panics(s in "\\PC{0,20}") {
            let _ = s.parse::<ByteSize>();
            let _ = s.parse::<Frequency>();
            let _ = s.parse::<crate::SimDuration>();
        }
    }
}
