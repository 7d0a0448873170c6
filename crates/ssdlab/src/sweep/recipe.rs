//! A run as the user would give it to `ssdlab run`: device, settings, blocks, preconditioning,
//! workload and seed. It resolves to a [`RunSpec`] and prints as the equivalent command.

use std::path::{Path, PathBuf};

use firmware::config::DeviceConfig;
use firmware::ftl::Precondition;
use toml::Value;

use super::file::Base;
use super::plan::SetupError;
use crate::setup::{
    DEFAULT_AGEING, DEFAULT_DEVICE, DeviceError, JobOption, RunSpec, Setting, WorkloadSpec, apply_settings,
    set_blocks,
};

pub use crate::setup::value_text;

/// One run's inputs, unresolved.
#[derive(Clone, Debug)]
pub struct Recipe {
    /// A preset name or a device file's path.
    pub device: String,
    /// `--set` changes, in order.
    pub sets: Vec<Setting>,
    /// `--blocks`.
    pub blocks: Option<u32>,
    /// The preconditioning; `None`: a fresh device.
    pub precondition: Option<String>,
    /// The workload.
    pub workload: WorkloadSpec,
    /// The seed.
    pub seed: u64,
}

impl Recipe {
    /// Resolves the recipe; `device` loads a device by name.
    pub fn spec(
        &self,
        device: &mut dyn FnMut(&str) -> Result<DeviceConfig, DeviceError>,
    ) -> Result<RunSpec, SetupError> {
        let mut cfg = device(&self.device)?;
        if let Some(blocks) = self.blocks {
            set_blocks(&mut cfg, blocks)?;
        }
        let cfg = apply_settings(&cfg, &self.sets)?;
        Ok(RunSpec {
            device: cfg,
            jobs: self.workload.jobs()?,
            precondition: self.precondition.clone(),
            seed: self.seed,
        })
    }

    /// The `ssdlab run` command line that runs the same spec.
    pub fn command(&self) -> String {
        let mut out = vec!["ssdlab".to_string(), "run".into(), quote(&self.device)];
        out.push("--precondition".into());
        out.push(self.precondition.clone().unwrap_or_else(|| "none".into()));
        if let Some(b) = self.blocks {
            out.push(format!("--blocks {b}"));
        }
        for s in &self.sets {
            out.push(format!("--set {}", quote(&s.to_string())));
        }
        if let Some(f) = &self.workload.job_file {
            out.push(format!("--job-file {}", quote(&f.display().to_string())));
        }
        for o in &self.workload.options {
            let kv = match &o.value {
                Some(v) => format!("{}={v}", o.key),
                None => o.key.clone(),
            };
            out.push(format!("--fio {}", quote(&kv)));
        }
        out.push(format!("--seed {}", self.seed));
        out.join(" ")
    }
}

impl Recipe {
    /// The run `base` describes (seed 1); relative paths in it are relative to `dir`.
    pub fn from_base(b: &Base, dir: &Path) -> Result<Recipe, String> {
        let mut sets = Vec::new();
        flatten("", &b.set, &mut sets);
        let mut options = Vec::new();
        for (k, v) in &b.workload {
            let value = option_value(v).map_err(|m| format!("workload.{k}: {m}"))?;
            options.push(JobOption { key: k.clone(), value, label: format!("workload.{k}") });
        }
        let precondition = match b.precondition.as_deref() {
            None => Some(crate::describe(DEFAULT_AGEING)),
            Some(p) => precondition(p).map_err(|m| format!("precondition: {m}"))?,
        };
        Ok(Recipe {
            device: resolve(b.device.as_deref().unwrap_or(DEFAULT_DEVICE), dir),
            sets,
            blocks: b.blocks,
            precondition,
            workload: WorkloadSpec { job_file: b.job_file.as_ref().map(|f| within(dir, f)), options },
            seed: 1,
        })
    }
}

/// `set` tables as paths: `{ ftl = { op = 0.2 } }` and `{ "ftl.op" = 0.2 }` are both `ftl.op`.
fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<Setting>) {
    for (k, v) in t {
        let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            Value::Table(inner) => flatten(&path, inner, out),
            v => out.push(Setting::new(&path, v.clone())),
        }
    }
}

/// A fio option's value: text, a number, or `true` for a flag.
pub fn option_value(v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::String(s) => Ok(Some(s.clone())),
        Value::Integer(i) => Ok(Some(i.to_string())),
        Value::Float(f) => Ok(Some(f.to_string())),
        Value::Boolean(true) => Ok(None),
        Value::Boolean(false) => Ok(Some("0".into())),
        other => Err(format!("expected text, a number or true/false, not {other}")),
    }
}

/// `none` (a fresh device) or a preconditioning, checked.
pub fn precondition(text: &str) -> Result<Option<String>, String> {
    match text {
        "none" => Ok(None),
        p => p.parse::<Precondition>().map(|k| Some(crate::describe(k))),
    }
}

/// A preset's name as is, a file's path relative to `dir`.
pub fn resolve(name: &str, dir: &Path) -> String {
    if firmware::presets::get(name).is_some() {
        name.to_string()
    } else {
        within(dir, name).display().to_string()
    }
}

/// `name` relative to `dir` (as given if `dir` is the current directory).
pub fn within(dir: &Path, name: &str) -> PathBuf {
    if dir == Path::new(".") { PathBuf::from(name) } else { dir.join(name) }
}

/// `s` quoted for a POSIX shell where needed.
fn quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-.,:/=%+@".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_says_everything_that_makes_the_run() {
        let r = Recipe {
            device: "my dev.toml".into(),
            sets: vec![Setting::new("ftl.gc.victim", Value::String("cost-benefit".into()))],
            blocks: Some(64),
            precondition: None,
            workload: WorkloadSpec {
                job_file: None,
                options: vec![JobOption {
                    key: "random_distribution".into(),
                    value: Some("zipf:1.2".into()),
                    label: String::new(),
                }],
            },
            seed: 3,
        };
        assert_eq!(
            r.command(),
            "ssdlab run 'my dev.toml' --precondition none --blocks 64 --set ftl.gc.victim=cost-benefit \
             --fio random_distribution=zipf:1.2 --seed 3"
        );
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
