//! A progress bar on stderr for runs longer than about a second (never when stderr is not a
//! terminal).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Shows progress once a run has lasted a second.
pub struct Progress {
    started: Instant,
    bar: Option<ProgressBar>,
    enabled: bool,
    label: &'static str,
}

impl Progress {
    /// A progress reporter for work counted in `label` units.
    pub fn new(label: &'static str) -> Self {
        Progress { started: Instant::now(), bar: None, enabled: std::io::stderr().is_terminal(), label }
    }

    /// Reports `done` of `total`.
    pub fn update(&mut self, done: u64, total: u64) {
        if !self.enabled || self.started.elapsed() < Duration::from_secs(1) {
            return;
        }
        let label = self.label;
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new(total);
            let style = format!("{{bar:40}} {{pos}}/{{len}} {label} ({{per_sec}}, eta {{eta}})");
            bar.set_style(ProgressStyle::with_template(&style).expect("valid template"));
            bar
        });
        bar.set_position(done);
    }

    /// Removes the bar.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
