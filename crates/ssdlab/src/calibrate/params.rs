//! The parameters a calibration fits: numbers in the device configuration, named by their
//! dotted paths (as `--set` names them). A parameter is a number, a duration, or a list of
//! either (the program times of an MLC or TLC page's levels): a list is scaled as a whole, and
//! its first element stands for it.

use firmware::config::DeviceConfig;
use firmware::config::set::{Setting, apply_settings};
use sim::SimDuration;
use toml::Value;

use super::CalibrateError;

/// The parameters fitted when `--fit` does not say (those the preset does not have are left
/// out): NAND read, program and erase times, the channel rate, the link's DMA set-up, and the
/// host interface's per-command firmware costs.
pub const DEFAULT_FIT: &[&str] = &[
    "timing.t_read",
    "timing.t_prog",
    "timing.t_erase",
    "timing.channel_mts",
    "host.link.dma_setup",
    "host.costs.fetch",
    "host.costs.completion",
];

/// How a parameter is written in the configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Integer,
    Float,
    Duration,
}

/// One fitted parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its dotted path.
    pub path: String,
    /// Its value in the starting configuration (ns for a duration; a list's first element).
    pub start: f64,
    kind: Kind,
    /// The list's elements over its first (`[1.0]` for a single value).
    ratios: Vec<f64>,
}

impl Param {
    /// The unit its values are in (`ns` for durations, empty for plain numbers).
    pub fn unit(&self) -> &'static str {
        if self.kind == Kind::Duration { "ns" } else { "" }
    }

    /// `v` as the configuration writes it.
    fn value(&self, v: f64) -> Value {
        let one = |x: f64| match self.kind {
            Kind::Integer => Value::Integer(x.round().max(1.0) as i64),
            Kind::Float => Value::Float(x),
            Kind::Duration => Value::String(SimDuration::from_nanos(x.round().max(1.0) as u64).to_string()),
        };
        if self.ratios.len() == 1 {
            one(v)
        } else {
            Value::Array(self.ratios.iter().map(|r| one(v * r)).collect())
        }
    }

    /// `v` for a person: `104us`, `400`.
    pub fn show(&self, v: f64) -> String {
        match self.kind {
            Kind::Duration => format!("{:#}", SimDuration::from_nanos(v.round().max(0.0) as u64)),
            Kind::Integer => format!("{}", v.round()),
            Kind::Float => format!("{v:.4}"),
        }
    }
}

/// The parameters of one fit, read from a configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// In the order given.
    pub list: Vec<Param>,
}

fn number(v: &Value) -> Option<(Kind, f64)> {
    match v {
        Value::Integer(i) => Some((Kind::Integer, *i as f64)),
        Value::Float(f) => Some((Kind::Float, *f)),
        Value::String(s) => s.parse::<SimDuration>().ok().map(|d| (Kind::Duration, d.as_nanos() as f64)),
        _ => None,
    }
}

fn lookup<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut at = root;
    for part in path.split('.') {
        let (key, rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        at = at.get(key)?;
        let mut rest = rest;
        while let Some(r) = rest.strip_prefix('[') {
            let (n, tail) = r.split_once(']')?;
            at = at.get(n.parse::<usize>().ok()?)?;
            rest = tail;
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(at)
}

impl Params {
    /// The parameters at `paths` in `cfg`. Fails naming the first path that is not a positive
    /// number, duration or list of them in `cfg`.
    pub fn read(cfg: &DeviceConfig, paths: &[String]) -> Result<Params, CalibrateError> {
        let root = Value::try_from(cfg).expect("a device configuration serialises as TOML");
        let mut list = Vec::new();
        for path in paths {
            let bad = || {
                CalibrateError::new(format!(
                    "--fit: {path} is not a parameter of {} (a positive number or duration of its configuration, as \
                     `ssdlab config {}` shows it, e.g. timing.t_read)",
                    cfg.name, cfg.name
                ))
            };
            if list.iter().any(|p: &Param| &p.path == path) {
                return Err(CalibrateError::new(format!("--fit: {path} is named twice")));
            }
            let v = lookup(&root, path).ok_or_else(bad)?;
            let values: Vec<(Kind, f64)> = match v {
                Value::Array(a) if !a.is_empty() => {
                    a.iter().map(number).collect::<Option<_>>().ok_or_else(bad)?
                }
                v => vec![number(v).ok_or_else(bad)?],
            };
            let (kind, first) = values[0];
            if values.iter().any(|&(k, x)| k != kind || x <= 0.0) {
                return Err(bad());
            }
            let ratios = values.iter().map(|&(_, x)| x / first).collect();
            list.push(Param { path: path.clone(), start: first, kind, ratios });
        }
        Ok(Params { list })
    }

    /// The default list ([`DEFAULT_FIT`]), less the paths `cfg` does not have.
    pub fn defaults(cfg: &DeviceConfig) -> Params {
        let list = DEFAULT_FIT
            .iter()
            .filter_map(|p| Params::read(cfg, &[p.to_string()]).ok())
            .flat_map(|p| p.list)
            .collect();
        Params { list }
    }

    /// `cfg` with the parameters set to `values` (in the list's order), validated.
    pub fn apply(&self, cfg: &DeviceConfig, values: &[f64]) -> Result<DeviceConfig, CalibrateError> {
        let settings: Vec<Setting> =
            self.list.iter().zip(values).map(|(p, &v)| Setting::new(&p.path, p.value(v))).collect();
        apply_settings(cfg, &settings).map_err(|e| CalibrateError::new(e.to_string()))
    }

    /// The starting values.
    pub fn starts(&self) -> Vec<f64> {
        self.list.iter().map(|p| p.start).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn softssd() -> DeviceConfig {
        firmware::presets::get("softssd").unwrap().unwrap()
    }

    #[test]
    fn paths_read_numbers_durations_and_lists() {
        let cfg = softssd();
        let paths: Vec<String> =
            ["timing.t_read", "timing.t_prog", "timing.channel_mts", "ftl.op"].map(String::from).to_vec();
        let p = Params::read(&cfg, &paths).unwrap();
        assert_eq!(p.starts(), vec![104_000.0, 290_000.0, 400.0, cfg.ftl.op]);
        let changed = p.apply(&cfg, &[52_000.0, 580_000.0, 800.0, 0.3]).unwrap();
        assert_eq!(Params::read(&changed, &paths[..1]).unwrap().list[0].start, 52_000.0);
        assert_eq!(changed.timing.channel_mts, 800);
        assert_eq!(changed.ftl.op, 0.3);
        // The list keeps its proportions: 290/870 becomes 580/1740.
        let back = Params::read(&changed, &paths[1..2]).unwrap();
        assert_eq!(back.list[0].start, 580_000.0);
        assert_eq!(back.list[0].ratios, vec![1.0, 3.0]);
        assert_eq!(p.list[0].show(104_000.0), "104us");
    }

    #[test]
    fn unknown_and_unfit_paths_are_named() {
        let cfg = softssd();
        for path in ["nand.read_us", "timing.cell", "timing", "host.arbitration.kind", "timing.t_read[2]"] {
            let e = Params::read(&cfg, &[path.to_string()]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--fit: {path} is not a parameter of softssd")), "{e}");
        }
        let twice = ["timing.t_read".to_string(), "timing.t_read".to_string()];
        assert_eq!(
            Params::read(&cfg, &twice).unwrap_err().to_string(),
            "--fit: timing.t_read is named twice"
        );
        let d = Params::defaults(&cfg);
        assert_eq!(d.list.len(), DEFAULT_FIT.len());
    }
}
