//! fio's spellings of option values: sizes and counts with `k`/`m`/`g` suffixes, times whose
//! bare numbers are seconds, booleans, percentages, and the `read,write,trim` comma lists.
//!
//! Size suffixes follow fio's default (`kb_base=1024`): `k`, `kb`, `m`, `mb`, ... are powers of
//! 1024, case-insensitively. ssdlab also reads `KiB`, `MiB`, ... as powers of 1024, which is what
//! the IEC prefixes mean everywhere else in ssdlab; fio's compatibility mode would read `KiB` as
//! 1000, which nobody who writes `KiB` expects.

use sim::SimDuration;

use super::request::PerDir;

/// What a size value must look like, for error messages.
pub(crate) const SIZE_EXPECTED: &str = "a size such as 4096, 4k, 64KiB or 1m";
/// What a count value must look like, for error messages.
pub(crate) const COUNT_EXPECTED: &str = "a whole number such as 1000 or 4k";
/// What a time value must look like, for error messages.
pub(crate) const TIME_EXPECTED: &str = "a time such as 10 (seconds), 10s, 500ms or 2m (minutes)";

const SIZE_UNITS: &[(&str, u128)] = &[
    ("", 1),
    ("b", 1),
    ("k", 1 << 10),
    ("kb", 1 << 10),
    ("kib", 1 << 10),
    ("m", 1 << 20),
    ("mb", 1 << 20),
    ("mib", 1 << 20),
    ("g", 1 << 30),
    ("gb", 1 << 30),
    ("gib", 1 << 30),
    ("t", 1 << 40),
    ("tb", 1 << 40),
    ("tib", 1 << 40),
    ("p", 1 << 50),
    ("pb", 1 << 50),
    ("pib", 1 << 50),
];

const TIME_UNITS: &[(&str, u128)] = &[
    ("", 1_000_000_000),
    ("s", 1_000_000_000),
    ("sec", 1_000_000_000),
    ("ms", 1_000_000),
    ("msec", 1_000_000),
    ("us", 1_000),
    ("usec", 1_000),
    ("ns", 1),
    ("nsec", 1),
    ("m", 60_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("hr", 3_600_000_000_000),
    ("hour", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
    ("day", 86_400_000_000_000),
];

/// How a fractional result is turned into an integer.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Fraction {
    /// The value must come out whole (`1.5k` is fine, `0.3k` is not).
    Exact,
    /// Round to the nearest unit (times, to the nanosecond).
    Round,
}

/// `"<decimal><unit>"` scaled by the unit, case-insensitively; `None` if it does not parse,
/// overflows a `u64` or (with [`Fraction::Exact`]) is not whole.
fn scaled(input: &str, units: &[(&str, u128)], fraction: Fraction) -> Option<u64> {
    let s = input.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().filter(|_| fraction == Fraction::Exact);
    }
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = (&s[..split], s[split..].trim());
    let scale = units.iter().find(|(name, _)| name.eq_ignore_ascii_case(unit))?.1;
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty()) || int.len() + frac.len() > 30 || frac.contains('.') {
        return None;
    }
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    let denom = 10u128.pow(frac.len() as u32);
    let value = digits.checked_mul(scale)?;
    let whole = match fraction {
        Fraction::Exact if !value.is_multiple_of(denom) => return None,
        Fraction::Exact => value / denom,
        Fraction::Round => (value + denom / 2) / denom,
    };
    u64::try_from(whole).ok()
}

/// A byte count: `4096`, `4k`, `4K`, `64KiB`, `1m`, `1.5g`, `0x1000`.
pub(crate) fn parse_size(s: &str) -> Option<u64> {
    scaled(s, SIZE_UNITS, Fraction::Exact)
}

/// A plain count with fio's optional suffixes (`1000`, `4k` = 4096).
pub(crate) fn parse_count(s: &str) -> Option<u64> {
    scaled(s, SIZE_UNITS, Fraction::Exact)
}

/// A time; a bare number is seconds and `m` is minutes, as in fio.
pub(crate) fn parse_time(s: &str) -> Option<SimDuration> {
    scaled(s, TIME_UNITS, Fraction::Round).map(SimDuration::from_nanos)
}

/// `1`/`0`, `true`/`false`, `yes`/`no` or `on`/`off`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// A whole percentage from 0 to 100.
pub(crate) fn parse_percent(s: &str) -> Option<u32> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 3 {
        return None;
    }
    s.parse().ok().filter(|&p| p <= 100)
}

/// Splits fio's `read,write,trim` list. An empty element means "the default"; the last
/// element, unless it is empty (the value ends in a comma), also applies to the directions after
/// it: `4k` is 4k for all three, `4k,16k` is 4k for reads and 16k for writes and trims,
/// `4k,16k,` leaves trims at the default and `,16k` sets only writes and trims. `None` if there
/// are more than three elements.
pub(crate) fn split_per_dir(s: &str) -> Option<PerDir<Option<&str>>> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return None;
    }
    let last = *parts.last()?;
    let at = |i: usize| {
        let part = parts.get(i).copied().unwrap_or(last);
        (!part.is_empty()).then_some(part)
    };
    Some(PerDir { read: at(0), write: at(1), trim: at(2) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_fio_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("4kb"), Some(4096));
        assert_eq!(parse_size("4KiB"), Some(4096));
        assert_eq!(parse_size("1m"), Some(1 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("1t"), Some(1 << 40));
        assert_eq!(parse_size("1p"), Some(1 << 50));
        assert_eq!(parse_size("1.5k"), Some(1536));
        assert_eq!(parse_size("512b"), Some(512));
        assert_eq!(parse_size("0x1000"), Some(4096));
        assert_eq!(parse_size(" 8k "), Some(8192));
        for bad in ["", "k", "4x", "0.3k", "-4k", "1.2.3k", "99999999999999p", "4 k b", "0xzz", "."] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("1000"), Some(1000));
        assert_eq!(parse_count("4k"), Some(4096));
        assert_eq!(parse_count("x"), None);
    }

    #[test]
    fn times_default_to_seconds_and_m_is_minutes() {
        assert_eq!(parse_time("10"), Some(SimDuration::from_secs(10)));
        assert_eq!(parse_time("10s"), Some(SimDuration::from_secs(10)));
        assert_eq!(parse_time("500ms"), Some(SimDuration::from_millis(500)));
        assert_eq!(parse_time("250us"), Some(SimDuration::from_micros(250)));
        assert_eq!(parse_time("7ns"), Some(SimDuration::from_nanos(7)));
        assert_eq!(parse_time("2m"), Some(SimDuration::from_secs(120)));
        assert_eq!(parse_time("1h"), Some(SimDuration::from_secs(3600)));
        assert_eq!(parse_time("1d"), Some(SimDuration::from_secs(86_400)));
        assert_eq!(parse_time("1.5"), Some(SimDuration::from_millis(1500)));
        assert_eq!(parse_time("0"), Some(SimDuration::ZERO));
        for bad in ["", "s", "10 parsecs", "-1", "1e3"] {
            assert_eq!(parse_time(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn booleans_and_percents() {
        assert_eq!(parse_bool("1"), Some(true));
        assert_eq!(parse_bool("true"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("2"), None);
        assert_eq!(parse_percent("70"), Some(70));
        assert_eq!(parse_percent("100"), Some(100));
        assert_eq!(parse_percent("0"), Some(0));
        assert_eq!(parse_percent("101"), None);
        assert_eq!(parse_percent("-1"), None);
        assert_eq!(parse_percent("50%"), None);
    }

    #[test]
    fn per_dir_lists_follow_fio_comma_rules() {
        let p = |r: Option<&'static str>, w: Option<&'static str>, t: Option<&'static str>| PerDir {
            read: r,
            write: w,
            trim: t,
        };
        assert_eq!(split_per_dir("4k"), Some(p(Some("4k"), Some("4k"), Some("4k"))));
        assert_eq!(split_per_dir("4k,16k"), Some(p(Some("4k"), Some("16k"), Some("16k"))));
        assert_eq!(split_per_dir("4k,16k,"), Some(p(Some("4k"), Some("16k"), None)));
        assert_eq!(split_per_dir(",16k"), Some(p(None, Some("16k"), Some("16k"))));
        assert_eq!(split_per_dir(",16k,"), Some(p(None, Some("16k"), None)));
        assert_eq!(split_per_dir("4k,"), Some(p(Some("4k"), None, None)));
        assert_eq!(split_per_dir("1,2,3"), Some(p(Some("1"), Some("2"), Some("3"))));
        assert_eq!(split_per_dir("1,2,3,4"), None);
    }
}
