//! A run as the user would give it to `ssdlab run`: device, settings, blocks, preconditioning,
//! workload and seed. It resolves to a [`RunSpec`] and prints as the equivalent command.

use firmware::config::DeviceConfig;

use super::plan::SetupError;
use crate::setup::{DeviceError, RunSpec, Setting, WorkloadSpec, apply_settings, set_blocks};

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
        let mut cfg = apply_settings(&device(&self.device)?, &self.sets)?;
        if let Some(blocks) = self.blocks {
            set_blocks(&mut cfg, blocks)?;
        }
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
    use crate::setup::JobOption;
    use toml::Value;

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
