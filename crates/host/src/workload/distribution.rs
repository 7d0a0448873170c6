//! [`Distribution`]: which blocks of its region a random job touches (fio's
//! `random_distribution`), plus ssdlab's `hotcold` shorthand.

use std::fmt;
use std::str::FromStr;

use super::serde_str::fio_string_serde;
use super::values::parse_percent;

/// One zone of a `zoned` distribution: `access_pct` percent of the I/Os go to the next
/// `size_pct` percent of the region.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Zone {
    /// Share of the I/Os, in percent.
    pub access_pct: u32,
    /// Share of the region, in percent.
    pub size_pct: u32,
}

/// How random offsets are spread over the blocks of a job's region.
///
/// Blocks are `blockalign`-sized slots of the region. `zipf` and `pareto` rank the blocks by
/// popularity and then scatter the ranks over the region with a fixed bijective hash (a keyed
/// Feistel permutation whose key does not depend on the seed), as fio does, so that hot blocks
/// are not all at the start of the region and every job over the same region shares the same hot
/// blocks. `zoned` and `hotcold` zones are contiguous, in the order written.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Distribution {
    /// `random`: every block equally likely (the default).
    #[default]
    Uniform,
    /// `zipf:theta`: the block of popularity rank `k` (from 1) is chosen with probability
    /// proportional to `1 / k^theta`; `theta > 0` (fio itself refuses `theta = 1`; ssdlab does not
    /// need to).
    Zipf(f64),
    /// `pareto:h` with `0 < h < 1`, fio's formula: rank `(n - 1) * u^(ln h / ln (1 - h))` for a
    /// uniform `u`, so a fraction `h` of the blocks receives a fraction `1 - h` of the I/Os
    /// (`pareto:0.2` is the 80/20 rule).
    Pareto(f64),
    /// `zoned:a/s:a/s:...`: consecutive zones; zone `i` covers `s` percent of the region and
    /// receives `a` percent of the I/Os, uniformly inside the zone. Both columns add up to 100.
    Zoned(Vec<Zone>),
    /// `hotcold:H/A`, an ssdlab extension: `A` percent of the I/Os go to a hot set that is the
    /// first `H` percent of the region, the rest to the remaining cold blocks. The same as
    /// `zoned:A/H:(100-A)/(100-H)`; `0 < H < 100`.
    HotCold {
        /// Size of the hot set, percent of the region.
        hot_pct: u32,
        /// Share of the I/Os that go to the hot set, percent.
        access_pct: u32,
    },
}

impl Distribution {
    /// The distribution's zones (`zoned` and `hotcold`), or `None` for the others.
    pub fn zones(&self) -> Option<Vec<Zone>> {
        match self {
            Distribution::Zoned(zones) => Some(zones.clone()),
            &Distribution::HotCold { hot_pct, access_pct } => Some(vec![
                Zone { access_pct, size_pct: hot_pct },
                Zone { access_pct: 100 - access_pct, size_pct: 100 - hot_pct },
            ]),
            _ => None,
        }
    }
}

/// What went wrong parsing a [`Distribution`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DistributionParseError(String);

fn fail<T>(message: impl Into<String>) -> Result<T, DistributionParseError> {
    Err(DistributionParseError(message.into()))
}

/// Parses `a/b` as two whole percentages.
fn pair(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once('/')?;
    Some((parse_percent(a)?, parse_percent(b)?))
}

fn parse_number(
    kind: &str,
    arg: &str,
    ok: impl Fn(f64) -> bool,
    range: &str,
) -> Result<f64, DistributionParseError> {
    if arg.contains(':') {
        return fail(format!("{kind}: a distribution center ('{kind}:x:center') is not supported"));
    }
    match arg.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && ok(v) => Ok(v),
        _ => fail(format!("{kind} needs a number {range}, not '{arg}'")),
    }
}

fn parse_zoned(arg: &str) -> Result<Distribution, DistributionParseError> {
    if arg.contains(',') {
        return fail("separate zones per direction (',') are not supported; give one zone list");
    }
    let mut zones = Vec::new();
    for part in arg.split(':') {
        let Some((access_pct, size_pct)) = pair(part) else {
            return fail(format!("zone '{part}' is not access%/size% (for example 60/10)"));
        };
        if size_pct == 0 && access_pct > 0 {
            return fail(format!("zone '{part}' has accesses but no size"));
        }
        zones.push(Zone { access_pct, size_pct });
    }
    let access: u32 = zones.iter().map(|z| z.access_pct).sum();
    let size: u32 = zones.iter().map(|z| z.size_pct).sum();
    if access != 100 || size != 100 {
        return fail(format!("zone accesses add up to {access}% and sizes to {size}%; both must be 100%"));
    }
    Ok(Distribution::Zoned(zones))
}

impl FromStr for Distribution {
    type Err = DistributionParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        let needs_arg = |example: &str| fail(format!("{kind} needs a parameter, for example '{example}'"));
        match kind {
            "random" if arg.is_empty() => Ok(Distribution::Uniform),
            "zipf" if arg.is_empty() => needs_arg("zipf:1.2"),
            "zipf" => parse_number(kind, arg, |t| t > 0.0, "above 0").map(Distribution::Zipf),
            "pareto" if arg.is_empty() => needs_arg("pareto:0.2"),
            "pareto" => {
                parse_number(kind, arg, |h| h > 0.0 && h < 1.0, "between 0 and 1").map(Distribution::Pareto)
            }
            "zoned" if arg.is_empty() => needs_arg("zoned:60/10:30/20:10/70"),
            "zoned" => parse_zoned(arg),
            "hotcold" => match pair(arg) {
                Some((hot_pct, access_pct)) if hot_pct > 0 && hot_pct < 100 => {
                    Ok(Distribution::HotCold { hot_pct, access_pct })
                }
                _ => fail(
                    "hotcold needs H/A: a hot set of H% (1 to 99) getting A% of the I/Os, e.g. hotcold:20/80",
                ),
            },
            "normal" | "zoned_abs" => fail(format!(
                "'{kind}' is not supported (use random, zipf:theta, pareto:h, zoned:... or hotcold:H/A)"
            )),
            _ => fail(format!(
                "'{s}' is not a distribution (use random, zipf:theta, pareto:h, zoned:... or hotcold:H/A)"
            )),
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => f.write_str("random"),
            Distribution::Zipf(theta) => write!(f, "zipf:{theta}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Zoned(zones) => {
                f.write_str("zoned")?;
                zones.iter().try_for_each(|z| write!(f, ":{}/{}", z.access_pct, z.size_pct))
            }
            Distribution::HotCold { hot_pct, access_pct } => write!(f, "hotcold:{hot_pct}/{access_pct}"),
        }
    }
}

fio_string_serde!(Distribution);

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Distribution, String> {
        s.parse::<Distribution>().map_err(|e| e.to_string())
    }

    #[test]
    fn parses_every_kind() {
        assert_eq!(parse("random"), Ok(Distribution::Uniform));
        assert_eq!(parse("zipf:1.2"), Ok(Distribution::Zipf(1.2)));
        assert_eq!(parse("zipf:1"), Ok(Distribution::Zipf(1.0)));
        assert_eq!(parse("pareto:0.2"), Ok(Distribution::Pareto(0.2)));
        let z = |a, s| Zone { access_pct: a, size_pct: s };
        assert_eq!(
            parse("zoned:60/10:30/20:10/70"),
            Ok(Distribution::Zoned(vec![z(60, 10), z(30, 20), z(10, 70)]))
        );
        assert_eq!(parse("zoned:0/50:100/50"), Ok(Distribution::Zoned(vec![z(0, 50), z(100, 50)])));
        let hc = parse("hotcold:20/80").unwrap();
        assert_eq!(hc, Distribution::HotCold { hot_pct: 20, access_pct: 80 });
        assert_eq!(hc.zones(), Some(vec![z(80, 20), z(20, 80)]));
        assert_eq!(Distribution::Uniform.zones(), None);
    }

    #[test]
    fn rejects_with_reasons() {
        for (input, needle) in [
            ("zipf", "needs a parameter"),
            ("zipf:0", "above 0"),
            ("zipf:-1", "above 0"),
            ("zipf:inf", "above 0"),
            ("zipf:NaN", "above 0"),
            ("zipf:1.2:0.5", "center"),
            ("pareto:1", "between 0 and 1"),
            ("pareto:0", "between 0 and 1"),
            ("zoned:60/10:30/20", "add up to 90%"),
            ("zoned:60/10:40/10", "sizes to 20%"),
            ("zoned:60/0:40/100", "no size"),
            ("zoned:60-10", "not access%/size%"),
            ("zoned:50/50:50/50,100/100", "per direction"),
            ("hotcold:0/80", "hotcold needs H/A"),
            ("hotcold:100/80", "hotcold needs H/A"),
            ("hotcold:20", "hotcold needs H/A"),
            ("normal:10", "'normal' is not supported"),
            ("zoned_abs:50/1g:50/2g", "not supported"),
            ("gaussian", "not a distribution"),
            ("random:3", "not a distribution"),
        ] {
            let err = parse(input).unwrap_err();
            assert!(err.contains(needle), "{input}: {err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["random", "zipf:1.2", "zipf:0.8", "pareto:0.2", "zoned:60/10:30/20:10/70", "hotcold:10/90"]
        {
            let d = parse(s).unwrap();
            assert_eq!(d.to_string(), s);
            assert_eq!(parse(&d.to_string()), Ok(d));
        }
    }
}
