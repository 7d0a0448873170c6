//! Changing one field of a device configuration by its dotted path (`--set PATH=VALUE` on the
//! command line), the path
//! the configuration's own errors use (`ftl.op`, `ftl.gc.victim`, `controller.cores[0].clock`).
//!
//! The value is TOML (`0.2`, `64`, `true`, `[1, 2]`, `{ kind = "full" }`); text that is not
//! TOML is a string (`greedy`, `512MiB`), so quotes are needed only for a string that would
//! read as something else (`name="123"`). A table value replaces the whole table, and setting a
//! section's `kind` starts that section afresh with the new kind's defaults
//! (`architecture.kind=tradition` drops softssd's core placement).
//!
//! The change is made on the configuration as TOML and read back through the same checks as a
//! file: an unknown key is rejected with the keys that exist, a value of the wrong type with
//! the type expected, and the result is validated, so errors name the path.

use std::fmt;
use std::str::FromStr;

use crate::config::DeviceConfig;
use sim::config::ConfigError;
use toml::Value;

/// One `PATH=VALUE` change.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// The dotted path, e.g. `ftl.gc.victim`.
    pub path: String,
    /// The new value.
    pub value: Value,
}

/// Why a setting could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// Not of the form `PATH=VALUE`.
    #[error("{0}: expected PATH=VALUE, e.g. ftl.op=0.2")]
    Syntax(String),
    /// The path is malformed or runs through a value that is not a section or array.
    #[error("{path}: {reason}")]
    Path {
        /// The path.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The configuration has no such key, or the value has the wrong type.
    #[error("{path}: {message}")]
    Rejected {
        /// The path.
        path: String,
        /// What the configuration reader said (the keys or the type it expected).
        message: String,
    },
    /// The changed configuration is not a valid device.
    #[error("{0}")]
    Invalid(ConfigError),
}

impl Setting {
    /// A setting of `path` to `value`.
    pub fn new(path: &str, value: Value) -> Setting {
        Setting { path: path.to_string(), value }
    }

    /// The value as it would be written after `=` on a command line (strings without quotes
    /// unless they would read as another type).
    pub fn value_text(&self) -> String {
        value_text(&self.value)
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.path, self.value_text())
    }
}

impl FromStr for Setting {
    type Err = SetError;

    fn from_str(s: &str) -> Result<Setting, SetError> {
        match s.split_once('=') {
            Some((path, value)) if !path.trim().is_empty() => {
                Ok(Setting { path: path.trim().to_string(), value: parse_value(value.trim()) })
            }
            _ => Err(SetError::Syntax(s.to_string())),
        }
    }
}

/// `v` as written after `=`: TOML, except that a string is bare unless it would read as
/// another type.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) if parse_value(s) == *v => s.clone(),
        v => v.to_string(),
    }
}

/// Reads `text` as a TOML value, or takes it as a string if it is not one.
pub fn parse_value(text: &str) -> Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) if t.len() == 1 => t.remove("v").unwrap_or_else(|| Value::String(text.to_string())),
        _ => Value::String(text.to_string()),
    }
}

/// One step of a path: a table key or an array index.
#[derive(Debug, PartialEq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Splits `a.b[2].c` into its steps.
fn steps(path: &str) -> Result<Vec<Step<'_>>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if key.is_empty() || !key.chars().all(ok) {
            return Err(format!("`{part}` is not a key (keys are letters, digits, _ and -, joined by dots)"));
        }
        out.push(Step::Key(key));
        while !rest.is_empty() {
            let index = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(n, tail)| n.parse::<usize>().ok().map(|n| (n, tail)));
            let Some((n, tail)) = index else {
                return Err(format!("`{part}`: an index is written [N]"));
            };
            out.push(Step::Index(n));
            rest = tail;
        }
    }
    Ok(out)
}

/// Puts `value` at `path` in `root`, creating missing tables on the way.
fn put(root: &mut Value, path: &str, value: Value) -> Result<(), SetError> {
    let steps = steps(path).map_err(|reason| SetError::Path { path: path.to_string(), reason })?;
    let mut at = root;
    let mut walked = String::new();
    for (i, step) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        let not_container = |walked: &str| SetError::Path {
            path: path.to_string(),
            reason: format!("`{walked}` is not a section of the configuration"),
        };
        at = match (step, at) {
            (Step::Key(k), Value::Table(t)) => {
                if last {
                    // A section's kind selects its variant: the section starts afresh.
                    if *k == "kind" {
                        t.clear();
                    }
                    t.insert(k.to_string(), value);
                    return Ok(());
                }
                t.entry(k.to_string()).or_insert_with(|| Value::Table(toml::Table::new()))
            }
            (Step::Index(n), Value::Array(a)) => {
                let len = a.len();
                let Some(slot) = a.get_mut(*n) else {
                    return Err(SetError::Path {
                        path: path.to_string(),
                        reason: format!("`{walked}` has {len} elements, no [{n}]"),
                    });
                };
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => return Err(not_container(if walked.is_empty() { path } else { &walked })),
        };
        match step {
            Step::Key(k) if walked.is_empty() => walked.push_str(k),
            Step::Key(k) => walked.push_str(&format!(".{k}")),
            Step::Index(n) => walked.push_str(&format!("[{n}]")),
        }
    }
    Ok(())
}

/// `cfg` with every setting applied in order, validated. The error names the first setting
/// that does not fit (or the field validation rejects).
pub fn apply_settings(cfg: &DeviceConfig, settings: &[Setting]) -> Result<DeviceConfig, SetError> {
    if settings.is_empty() {
        return Ok(cfg.clone());
    }
    let mut root = Value::try_from(cfg).expect("a device configuration serialises as TOML");
    let mut out = cfg.clone();
    for s in settings {
        put(&mut root, &s.path, s.value.clone())?;
        out = root.clone().try_into().map_err(|e: toml::de::Error| SetError::Rejected {
            path: s.path.clone(),
            message: message(&e),
        })?;
    }
    out.validate().map_err(SetError::Invalid)?;
    Ok(out)
}

/// The reader's message on one line, without its position (there is no file).
fn message(e: &toml::de::Error) -> String {
    e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small device mapping with DFTL (a CMT size and segment entries), three cores.
    fn dftl_device() -> DeviceConfig {
        let text = "name = 'x'\n[geometry]\nchannels = 2\nways = 1\nblocks = 256\npages = 8\n\
                    page_size = '16KiB'\n[ftl]\nmapping = { kind = 'dftl', cmt = '64KiB', segment_entries = 64 }\n";
        DeviceConfig::from_toml(text, "test").unwrap()
    }

    fn set(cfg: &DeviceConfig, text: &str) -> Result<DeviceConfig, String> {
        let s: Setting = text.parse().map_err(|e: SetError| e.to_string())?;
        apply_settings(cfg, &[s]).map_err(|e| e.to_string())
    }

    #[test]
    fn values_are_toml_or_strings() {
        assert_eq!(parse_value("0.2"), Value::Float(0.2));
        assert_eq!(parse_value("64"), Value::Integer(64));
        assert_eq!(parse_value("greedy"), Value::String("greedy".into()));
        assert_eq!(parse_value("\"123\""), Value::String("123".into()));
        assert_eq!(parse_value("1\nx = 2"), Value::String("1\nx = 2".into()));
        let s: Setting = "ftl.gc.victim=cost-benefit".parse().unwrap();
        assert_eq!(s.to_string(), "ftl.gc.victim=cost-benefit");
        assert_eq!(Setting::new("name", Value::String("7".into())).to_string(), "name=\"7\"");
    }

    #[test]
    fn settings_change_the_named_field_only() {
        let cfg = dftl_device();
        let op = set(&cfg, "ftl.op=0.3").unwrap();
        assert_eq!(op.ftl.op, 0.3);
        assert_eq!(DeviceConfig { ftl: cfg.ftl.clone(), ..op.clone() }, cfg);
        let gc = set(&cfg, "ftl.gc.victim=cost-benefit").unwrap();
        assert_eq!(gc.ftl.gc.victim, crate::ftl::VictimPolicy::CostBenefit);
        assert_eq!(set(&cfg, "ftl.gc.soft_free=9").unwrap().ftl.gc.soft_free, Some(9));
        let core = set(&cfg, "controller.cores[1].clock=800MHz").unwrap();
        assert_eq!(core.controller.cores[1].clock, sim::Frequency::mhz(800));
        assert_eq!(
            set(&cfg, "ftl.op=1").unwrap_err(),
            "ftl.op: over-provisioning must be between 0 and 1, exclusive (got 1)"
        );
    }

    #[test]
    fn bad_paths_and_types_are_named() {
        let cfg = dftl_device();
        let e = set(&cfg, "ftl.opp=0.2").unwrap_err();
        assert!(e.starts_with("ftl.opp: unknown field `opp`, expected one of"), "{e}");
        let e = set(&cfg, "ftl.op=fast").unwrap_err();
        assert!(e.starts_with("ftl.op: invalid type: string \"fast\", expected f64"), "{e}");
        let e = set(&cfg, "geometry.blocks=1.5").unwrap_err();
        assert!(e.contains("geometry.blocks: invalid type: floating point `1.5`"), "{e}");
        let e = set(&cfg, "ftl.op.x=1").unwrap_err();
        assert_eq!(e, "ftl.op.x: `ftl.op` is not a section of the configuration");
        let e = set(&cfg, "controller.cores[7].clock=1GHz").unwrap_err();
        assert_eq!(e, "controller.cores[7].clock: `controller.cores` has 3 elements, no [7]");
        assert!(set(&cfg, "ftl..op=1").unwrap_err().contains("is not a key"));
        assert!(set(&cfg, "noequals").unwrap_err().contains("expected PATH=VALUE"));
        let e = set(&cfg, "bogus=1").unwrap_err();
        assert!(e.starts_with("bogus: unknown field `bogus`"), "{e}");
        // The device maps with DFTL (a CMT size and segment entries): a new kind starts afresh.
        let full = set(&cfg, "ftl.mapping.kind=full").unwrap();
        assert_eq!(full.ftl.mapping, crate::ftl::MappingConfig::Full);
    }
}
