//! The sweep's progress bar on standard error: runs done of those to run, failures, and the
//! time left (never drawn when standard error is not a terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Where a sweep stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Runs in the sweep.
    pub total: usize,
    /// Runs whose results were already on disk.
    pub skipped: usize,
    /// Runs finished in this invocation.
    pub ran: usize,
    /// Of those, runs that failed.
    pub failed: usize,
}

/// A progress bar over the runs to run.
pub struct Bar(ProgressBar);

impl Bar {
    /// A bar for `s.total - s.skipped` runs; hidden unless `show` and standard error is a
    /// terminal.
    pub fn new(s: &Status, show: bool) -> Bar {
        let todo = (s.total - s.skipped) as u64;
        let target = if show { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(todo), target);
        let style = "{bar:40} {pos}/{len} runs ({elapsed}, eta {eta}){msg}";
        bar.set_style(ProgressStyle::with_template(style).expect("valid template"));
        Bar(bar)
    }

    /// Shows `s`.
    pub fn update(&self, s: &Status) {
        self.0.set_position(s.ran as u64);
        if s.failed > 0 {
            self.0.set_message(format!(", {} failed", s.failed));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
