//! [`Extent`]: a length or position on the device, in bytes or as a percentage of the device
//! (fio's `size=50%`, `offset=25%`).

use std::fmt;
use std::str::FromStr;

use sim::ByteSize;

use super::serde_str::fio_string_serde;
use super::values::{SIZE_EXPECTED, parse_percent, parse_size};

/// A byte count or a percentage of the device's capacity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Extent {
    /// An absolute number of bytes (`1g`, `4096`).
    Bytes(ByteSize),
    /// A whole percentage (0 to 100) of the device's capacity (`50%`).
    Percent(u32),
}

impl Extent {
    /// Zero bytes.
    pub const ZERO: Extent = Extent::Bytes(ByteSize(0));

    /// The extent in bytes on a device of `capacity` bytes (percentages round down).
    pub fn resolve(self, capacity: u64) -> u64 {
        match self {
            Extent::Bytes(b) => b.bytes(),
            Extent::Percent(p) => (capacity as u128 * p as u128 / 100) as u64,
        }
    }

    /// Whether the extent is zero bytes or zero percent.
    pub fn is_zero(self) -> bool {
        matches!(self, Extent::Bytes(ByteSize(0)) | Extent::Percent(0))
    }
}

impl Default for Extent {
    fn default() -> Self {
        Extent::ZERO
    }
}

/// What went wrong parsing an [`Extent`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {SIZE_EXPECTED} or a percentage such as 50%")]
pub struct ExtentParseError;

impl FromStr for Extent {
    type Err = ExtentParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().strip_suffix('%') {
            Some(pct) => parse_percent(pct).map(Extent::Percent),
            None => parse_size(s).map(|b| Extent::Bytes(ByteSize(b))),
        }
        .ok_or(ExtentParseError)
    }
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Extent::Bytes(b) => write!(f, "{b}"),
            Extent::Percent(p) => write!(f, "{p}%"),
        }
    }
}

fio_string_serde!(Extent);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bytes_and_percentages() {
        assert_eq!("1g".parse(), Ok(Extent::Bytes(ByteSize::gib(1))));
        assert_eq!("50%".parse(), Ok(Extent::Percent(50)));
        assert_eq!(" 100% ".parse(), Ok(Extent::Percent(100)));
        assert_eq!("101%".parse::<Extent>(), Err(ExtentParseError));
        assert_eq!("12.5%".parse::<Extent>(), Err(ExtentParseError));
        assert_eq!("%".parse::<Extent>(), Err(ExtentParseError));
        assert_eq!("lots".parse::<Extent>(), Err(ExtentParseError));
    }

    #[test]
    fn resolves_against_capacity() {
        assert_eq!(Extent::Percent(50).resolve(1000), 500);
        assert_eq!(Extent::Percent(33).resolve(1000), 330);
        assert_eq!(Extent::Percent(100).resolve(u64::MAX), u64::MAX);
        assert_eq!(Extent::Bytes(ByteSize::kib(4)).resolve(1), 4096);
        assert!(Extent::Percent(0).is_zero() && Extent::ZERO.is_zero());
        assert!(!Extent::Percent(1).is_zero());
    }

    #[test]
    fn display_round_trips() {
        for e in [Extent::Percent(25), Extent::Bytes(ByteSize::mib(3)), Extent::Bytes(ByteSize(1000))] {
            assert_eq!(e.to_string().parse::<Extent>(), Ok(e));
        }
    }
}
