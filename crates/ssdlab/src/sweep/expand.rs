//! From axes to points: a list or range per axis, combined as a grid or zipped, each point
//! run once per seed.

use toml::Value;

use super::file::{Combine, RangeSpec, Values};

/// The most runs one sweep may have (a typo in a range should not plan a billion runs).
pub const MAX_RUNS: usize = 100_000;

/// The values of a list or range, or why there are none.
pub fn values(v: &Values) -> Result<Vec<Value>, String> {
    let out = match v {
        Values::List(list) => list.clone(),
        Values::Range(r) => range(r)?,
    };
    if out.is_empty() {
        return Err("no values (an axis needs at least one)".into());
    }
    if out.len() > MAX_RUNS {
        return Err(format!("{} values, more than the {MAX_RUNS} runs a sweep may have", out.len()));
    }
    Ok(out)
}

/// `from, from + step, ...` up to `to`, integers if all three are, else floats rounded to 12
/// significant digits (so that 0.1 + 0.2 is written 0.3).
fn range(r: &RangeSpec) -> Result<Vec<Value>, String> {
    let step = r.step.clone().unwrap_or(Value::Integer(1));
    if let (Value::Integer(from), Value::Integer(to), Value::Integer(step)) = (&r.from, &r.to, &step) {
        let (from, to, step) = (*from, *to, *step);
        if step == 0 {
            return Err("range: step must not be 0".into());
        }
        let n = if (to - from).signum() * step.signum() < 0 { 0 } else { (to - from) / step + 1 };
        if n as u64 > MAX_RUNS as u64 {
            return Err(format!("range: {n} values, more than the {MAX_RUNS} runs a sweep may have"));
        }
        return Ok((0..n).map(|i| Value::Integer(from + i * step)).collect());
    }
    let num = |v: &Value, name: &str| match v {
        Value::Integer(i) => Ok(*i as f64),
        Value::Float(f) if f.is_finite() => Ok(*f),
        other => Err(format!("range: {name} must be a number, not {other}")),
    };
    let (from, to, step) = (num(&r.from, "from")?, num(&r.to, "to")?, num(&step, "step")?);
    if step == 0.0 {
        return Err("range: step must not be 0".into());
    }
    let span = (to - from) / step;
    if span < -1e-9 {
        return Ok(Vec::new());
    }
    let n = (span + 1e-9).floor() + 1.0;
    if n > MAX_RUNS as f64 {
        return Err(format!("range: {n} values, more than the {MAX_RUNS} runs a sweep may have"));
    }
    Ok((0..n as usize).map(|i| Value::Float(round12(from + i as f64 * step))).collect())
}

/// `v` rounded to 12 significant digits.
fn round12(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    format!("{v:.11e}").parse().unwrap_or(v)
}

/// The points: for each, the index of its value on every axis.
pub fn points(lengths: &[usize], combine: Combine) -> Result<Vec<Vec<usize>>, String> {
    match combine {
        Combine::Zip => {
            let n = lengths.first().copied().unwrap_or(1);
            if let Some(bad) = lengths.iter().position(|&l| l != n) {
                return Err(format!(
                    "combine = \"zip\" needs axes of one length: axis 1 has {n} values, axis {} has {}",
                    bad + 1,
                    lengths[bad]
                ));
            }
            Ok((0..n).map(|i| vec![i; lengths.len()]).collect())
        }
        Combine::Grid => {
            let total =
                lengths.iter().try_fold(1usize, |acc, &l| acc.checked_mul(l).filter(|&t| t <= MAX_RUNS));
            let Some(total) = total else {
                return Err(format!("the grid has more than the {MAX_RUNS} runs a sweep may have"));
            };
            Ok((0..total)
                .map(|mut k| {
                    let mut idx = vec![0; lengths.len()];
                    for (slot, &len) in idx.iter_mut().zip(lengths).rev() {
                        *slot = k % len;
                        k /= len;
                    }
                    idx
                })
                .collect())
        }
    }
}

/// The seeds: non-negative integers, each once.
pub fn seeds(v: Option<&Values>) -> Result<Vec<u64>, String> {
    let Some(v) = v else { return Ok(vec![1]) };
    let mut out = Vec::new();
    for value in values(v).map_err(|e| format!("seeds: {e}"))? {
        match value {
            Value::Integer(i) if i >= 0 => {
                if out.contains(&(i as u64)) {
                    return Err(format!("seeds: {i} is listed twice"));
                }
                out.push(i as u64)
            }
            other => return Err(format!("seeds: {other} is not a non-negative integer")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(from: Value, to: Value, step: Option<Value>) -> Result<Vec<Value>, String> {
        values(&Values::Range(RangeSpec { from, to, step }))
    }

    #[test]
    fn ranges_include_both_ends_and_have_no_float_noise() {
        use Value::{Float as F, Integer as I};
        assert_eq!(r(I(1), I(4), None).unwrap(), [I(1), I(2), I(3), I(4)]);
        assert_eq!(r(I(10), I(0), Some(I(-5))).unwrap(), [I(10), I(5), I(0)]);
        assert_eq!(r(F(0.1), F(0.3), Some(F(0.1))).unwrap(), [F(0.1), F(0.2), F(0.3)]);
        assert_eq!(r(I(0), F(1.0), Some(F(0.25))).unwrap().len(), 5);
        assert!(r(I(4), I(1), None).unwrap_err().contains("no values"));
        assert!(r(I(1), I(4), Some(I(0))).unwrap_err().contains("step must not be 0"));
        assert!(
            r(Value::String("a".into()), I(4), Some(F(0.5))).unwrap_err().contains("from must be a number")
        );
        assert!(r(I(0), I(10_000_000), None).unwrap_err().contains("more than"));
        assert!(values(&Values::List(vec![])).unwrap_err().contains("no values"));
    }

    #[test]
    fn grids_vary_the_last_axis_fastest_and_zips_pair_up() {
        let g = points(&[2, 3], Combine::Grid).unwrap();
        assert_eq!(g, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
        assert_eq!(points(&[], Combine::Grid).unwrap(), [Vec::<usize>::new()]);
        assert_eq!(points(&[3, 3], Combine::Zip).unwrap(), [[0, 0], [1, 1], [2, 2]]);
        let e = points(&[3, 2], Combine::Zip).unwrap_err();
        assert_eq!(e, "combine = \"zip\" needs axes of one length: axis 1 has 3 values, axis 2 has 2");
        assert!(points(&[1000, 1000], Combine::Grid).unwrap_err().contains("more than"));
    }

    #[test]
    fn seeds_default_to_one_and_must_be_distinct_naturals() {
        assert_eq!(seeds(None).unwrap(), [1]);
        let range = Values::Range(RangeSpec { from: Value::Integer(1), to: Value::Integer(3), step: None });
        assert_eq!(seeds(Some(&range)).unwrap(), [1, 2, 3]);
        let bad = Values::List(vec![Value::Integer(1), Value::Integer(1)]);
        assert!(seeds(Some(&bad)).unwrap_err().contains("twice"));
        let neg = Values::List(vec![Value::Integer(-1)]);
        assert!(seeds(Some(&neg)).unwrap_err().contains("not a non-negative integer"));
    }
}
