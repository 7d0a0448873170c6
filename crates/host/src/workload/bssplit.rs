//! [`BsSplit`]: fio's weighted block-size mix (`bssplit=4k/50:64k/40:1m/10`).

use std::fmt;
use std::str::FromStr;

use sim::ByteSize;

use super::serde_str::fio_string_serde;
use super::values::parse_size;

/// One block size of a [`BsSplit`] and its share of the I/Os, in percent.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BsEntry {
    /// The block size.
    pub size: ByteSize,
    /// Percentage of I/Os of this size (0 to 100).
    pub weight: u32,
}

/// A weighted mix of block sizes whose weights add up to exactly 100.
///
/// Written `size/percent:size/percent:...`. As in fio, entries may leave the percentage out
/// (`4k/50:8k:16k`): they share what the others leave of 100 equally, the first of them taking
/// any remainder of the division.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BsSplit(Vec<BsEntry>);

impl BsSplit {
    /// The entries, in the order written; weights add up to 100.
    pub fn entries(&self) -> &[BsEntry] {
        &self.0
    }

    /// The smallest block size of the mix.
    pub fn min(&self) -> ByteSize {
        self.0.iter().map(|e| e.size).min().unwrap_or_default()
    }

    /// The largest block size of the mix.
    pub fn max(&self) -> ByteSize {
        self.0.iter().map(|e| e.size).max().unwrap_or_default()
    }
}

/// What went wrong parsing a [`BsSplit`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BsSplitParseError {
    /// An entry is not `size` or `size/percent`.
    #[error("'{0}' is not size/percent (for example 4k/50)")]
    Entry(String),
    /// The percentages do not add up to 100.
    #[error("percentages add up to {0}, not 100")]
    Total(u32),
}

impl FromStr for BsSplit {
    type Err = BsSplitParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut entries = Vec::new();
        let mut missing = Vec::new();
        let mut total = 0u32;
        for part in s.split(':') {
            let bad = || BsSplitParseError::Entry(part.trim().to_string());
            let (size, weight) = match part.split_once('/') {
                Some((size, w)) if !w.trim().is_empty() => (size, Some(w)),
                Some((size, _)) => (size, None),
                None => (part, None),
            };
            let size = parse_size(size).filter(|&b| b > 0).ok_or_else(bad)?;
            let weight = match weight {
                Some(w) => {
                    let w = w.trim();
                    let ok = !w.is_empty() && w.len() <= 3 && w.bytes().all(|b| b.is_ascii_digit());
                    let w: u32 = w.parse().ok().filter(|_| ok).ok_or_else(bad)?;
                    total = total.saturating_add(w);
                    w
                }
                None => {
                    missing.push(entries.len());
                    0
                }
            };
            entries.push(BsEntry { size: ByteSize(size), weight });
        }
        if total > 100 || (missing.is_empty() && total != 100) {
            return Err(BsSplitParseError::Total(total));
        }
        if let Some(&first) = missing.first() {
            let left = 100 - total;
            let share = left / missing.len() as u32;
            for &i in &missing {
                entries[i].weight = share;
            }
            entries[first].weight += left - share * missing.len() as u32;
        }
        Ok(BsSplit(entries))
    }
}

impl fmt::Display for BsSplit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ":" };
            write!(f, "{sep}{}/{}", e.size, e.weight)?;
        }
        Ok(())
    }
}

fio_string_serde!(BsSplit);

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(s: &str) -> Vec<(u64, u32)> {
        s.parse::<BsSplit>().unwrap().entries().iter().map(|e| (e.size.bytes(), e.weight)).collect()
    }

    #[test]
    fn parses_weighted_sizes() {
        assert_eq!(weights("4k/50:64k/40:1m/10"), [(4096, 50), (65536, 40), (1 << 20, 10)]);
        assert_eq!(weights("4k/100"), [(4096, 100)]);
        assert_eq!(weights("4k"), [(4096, 100)]);
        assert_eq!(weights("4k/0:8k/100"), [(4096, 0), (8192, 100)]);
    }

    #[test]
    fn missing_percentages_share_the_rest() {
        assert_eq!(weights("4k/50:8k/:16k"), [(4096, 50), (8192, 25), (16384, 25)]);
        assert_eq!(weights("4k:8k:16k"), [(4096, 34), (8192, 33), (16384, 33)]);
    }

    #[test]
    fn rejects_bad_splits() {
        assert_eq!("4k/50:8k/40".parse::<BsSplit>(), Err(BsSplitParseError::Total(90)));
        assert_eq!("4k/60:8k/60:1k".parse::<BsSplit>(), Err(BsSplitParseError::Total(120)));
        assert!(matches!("4k/x".parse::<BsSplit>(), Err(BsSplitParseError::Entry(_))));
        assert!(matches!("0/100".parse::<BsSplit>(), Err(BsSplitParseError::Entry(_))));
        assert!(matches!("".parse::<BsSplit>(), Err(BsSplitParseError::Entry(_))));
        assert!(matches!("4k/50::8k/50".parse::<BsSplit>(), Err(BsSplitParseError::Entry(_))));
        assert!(matches!("4k/-5:8k".parse::<BsSplit>(), Err(BsSplitParseError::Entry(_))));
        assert!(matches!("4k/9999".parse::<BsSplit>(), Err(BsSplitParseError::Entry(_))));
    }

    #[test]
    fn display_round_trips() {
        let s: BsSplit = "4k/50:64k/40:1m/10".parse().unwrap();
        assert_eq!(s.to_string(), "4KiB/50:64KiB/40:1MiB/10");
        assert_eq!(s.to_string().parse::<BsSplit>().unwrap(), s);
        assert_eq!((s.min(), s.max()), (ByteSize::kib(4), ByteSize::mib(1)));
    }
}
