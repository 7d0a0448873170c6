//! Field-level parsing shared by the format parsers: splitting a line on bytes, and numbers
//! parsed by hand with checked arithmetic, each failure becoming the [`BadLine`] that names the
//! field. Nothing here allocates unless it reports an error.

use super::error::BadLine;

/// Bytes per sector in the sector-addressed formats (SPC LBAs, MQSim, blkparse).
pub(crate) const SECTOR_BYTES: u64 = 512;

/// The limit named when a byte offset or length overflows.
pub(crate) const U64_BYTES: &str = "u64 bytes";
/// The limit named when a time overflows.
pub(crate) const U64_NS: &str = "u64 nanoseconds";

/// The next field of `fields`, or [`BadLine::Missing`] naming it.
pub(crate) fn next<'a>(
    fields: &mut impl Iterator<Item = &'a [u8]>,
    name: &'static str,
) -> Result<&'a [u8], BadLine> {
    fields.next().ok_or(BadLine::Missing(name))
}

/// Fails with [`BadLine::Extra`] if `fields` has anything left.
pub(crate) fn no_more<'a>(fields: &mut impl Iterator<Item = &'a [u8]>) -> Result<(), BadLine> {
    match fields.next() {
        Some(extra) => Err(BadLine::extra(extra)),
        None => Ok(()),
    }
}

/// The comma-separated fields of `line`, each trimmed of surrounding spaces and tabs.
pub(crate) fn commas(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b',').map(<[u8]>::trim_ascii)
}

/// The fields of `line` separated by runs of ASCII white space.
pub(crate) fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty())
}

/// An unsigned decimal integer (digits only: no sign, no spaces, no separators).
pub(crate) fn uint(field: &'static str, s: &[u8]) -> Result<u64, BadLine> {
    if s.is_empty() {
        return Err(BadLine::bad(field, s));
    }
    let mut value: u64 = 0;
    for &b in s {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return Err(BadLine::bad(field, s));
        }
        value = match value.checked_mul(10).and_then(|v| v.checked_add(u64::from(digit))) {
            Some(v) => v,
            None => return Err(checked_digits(field, s, "u64")),
        };
    }
    Ok(value)
}

/// An overflowing number's error: [`BadLine::TooLarge`], or [`BadLine::Bad`] if a non-digit
/// follows the point where it overflowed.
fn checked_digits(field: &'static str, s: &[u8], limit: &'static str) -> BadLine {
    if s.iter().all(u8::is_ascii_digit) {
        BadLine::too_large(field, s, limit)
    } else {
        BadLine::bad(field, s)
    }
}

/// An unsigned decimal integer that must fit in a `u32` (volume numbers).
pub(crate) fn uint32(field: &'static str, s: &[u8]) -> Result<u32, BadLine> {
    let value = uint(field, s).map_err(|e| match e {
        BadLine::TooLarge { field, value, .. } => BadLine::TooLarge { field, value, limit: "u32" },
        other => other,
    })?;
    u32::try_from(value).map_err(|_| BadLine::too_large(field, s, "u32"))
}

/// `value * factor`, or [`BadLine::TooLarge`] quoting the field `s` it came from.
pub(crate) fn scaled(
    field: &'static str,
    s: &[u8],
    value: u64,
    factor: u64,
    limit: &'static str,
) -> Result<u64, BadLine> {
    value.checked_mul(factor).ok_or_else(|| BadLine::too_large(field, s, limit))
}

/// A count of 512-byte sectors, in bytes.
pub(crate) fn sectors(field: &'static str, s: &[u8]) -> Result<u64, BadLine> {
    let n = uint(field, s).map_err(|e| match e {
        BadLine::TooLarge { field, value, .. } => BadLine::TooLarge { field, value, limit: U64_BYTES },
        other => other,
    })?;
    scaled(field, s, n, SECTOR_BYTES, U64_BYTES)
}

/// A byte count written as a plain decimal.
pub(crate) fn bytes(field: &'static str, s: &[u8]) -> Result<u64, BadLine> {
    uint(field, s).map_err(|e| match e {
        BadLine::TooLarge { field, value, .. } => BadLine::TooLarge { field, value, limit: U64_BYTES },
        other => other,
    })
}

/// A whole number of `unit_ns`-nanosecond units (FILETIME ticks, microseconds), in nanoseconds.
pub(crate) fn time_units(field: &'static str, s: &[u8], unit_ns: u64) -> Result<u64, BadLine> {
    let n = uint(field, s).map_err(|e| match e {
        BadLine::TooLarge { field, value, .. } => BadLine::TooLarge { field, value, limit: U64_NS },
        other => other,
    })?;
    scaled(field, s, n, unit_ns, U64_NS)
}

/// Seconds written as a decimal fraction (`12`, `0.011413`, `3.000000001`, `.5`), in
/// nanoseconds. Digits past the ninth after the point are checked and dropped (truncation).
/// No sign, no exponent.
pub(crate) fn seconds(field: &'static str, s: &[u8]) -> Result<u64, BadLine> {
    let (whole, frac) = match s.iter().position(|&b| b == b'.') {
        Some(dot) => (&s[..dot], &s[dot + 1..]),
        None => (s, &[][..]),
    };
    if whole.is_empty() && frac.is_empty() {
        return Err(BadLine::bad(field, s));
    }
    let secs = if whole.is_empty() {
        0
    } else {
        uint(field, whole).map_err(|e| match e {
            BadLine::TooLarge { .. } => BadLine::too_large(field, s, U64_NS),
            _ => BadLine::bad(field, s),
        })?
    };
    let mut nanos: u64 = 0;
    let mut scale: u64 = 100_000_000;
    for &b in frac {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return Err(BadLine::bad(field, s));
        }
        nanos += u64::from(digit) * scale;
        scale /= 10;
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(nanos))
        .ok_or_else(|| BadLine::too_large(field, s, U64_NS))
}

/// Fails with [`BadLine::EndOverflow`] unless `offset + len` fits in a `u64`.
pub(crate) fn check_end(offset: u64, len: u64) -> Result<(), BadLine> {
    match offset.checked_add(len) {
        Some(_) => Ok(()),
        None => Err(BadLine::EndOverflow { offset, len }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(uint("n", b"0"), Ok(0));
        assert_eq!(uint("n", b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            uint("n", b"18446744073709551616").unwrap_err().to_string(),
            "n '18446744073709551616' is too large (does not fit in u64)"
        );
        assert_eq!(uint("n", b"").unwrap_err().to_string(), "bad n ''");
        assert_eq!(uint("n", b"-1").unwrap_err().to_string(), "bad n '-1'");
        assert_eq!(uint("n", b"+1").unwrap_err().to_string(), "bad n '+1'");
        assert_eq!(
            uint("n", b"99999999999999999999x").unwrap_err().to_string(),
            "bad n '99999999999999999999x'"
        );
        assert_eq!(uint32("ASU", b"4294967295"), Ok(u32::MAX));
        assert_eq!(
            uint32("ASU", b"4294967296").unwrap_err().to_string(),
            "ASU '4294967296' is too large (does not fit in u32)"
        );
    }

    #[test]
    fn sector_counts_overflow_into_errors() {
        assert_eq!(sectors("LBA", b"36028797018963967"), Ok(36028797018963967 * 512));
        assert_eq!(
            sectors("LBA", b"36028797018963968").unwrap_err().to_string(),
            "LBA '36028797018963968' is too large (does not fit in u64 bytes)"
        );
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds("t", b"0.011413"), Ok(11_413_000));
        assert_eq!(seconds("t", b"12"), Ok(12_000_000_000));
        assert_eq!(seconds("t", b"12."), Ok(12_000_000_000));
        assert_eq!(seconds("t", b".5"), Ok(500_000_000));
        assert_eq!(seconds("t", b"1.0000000019"), Ok(1_000_000_001));
        assert_eq!(seconds("t", b"18446744073.709551615"), Ok(u64::MAX));
        assert!(matches!(seconds("t", b"18446744073.709551616"), Err(BadLine::TooLarge { .. })));
        for bad in [&b"."[..], b"", b"1e3", b"-1.0", b"1.2.3", b"0x10", b"1,5"] {
            assert_eq!(seconds("t", bad), Err(BadLine::bad("t", bad)), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn splitting() {
        assert_eq!(commas(b" 1 ,2,\t3").collect::<Vec<_>>(), [&b"1"[..], b"2", b"3"]);
        assert_eq!(words(b"  a \tb\r").collect::<Vec<_>>(), [&b"a"[..], b"b"]);
        assert_eq!(check_end(u64::MAX, 0), Ok(()));
        assert_eq!(check_end(u64::MAX, 1), Err(BadLine::EndOverflow { offset: u64::MAX, len: 1 }));
    }
}
