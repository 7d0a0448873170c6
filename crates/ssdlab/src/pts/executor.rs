//! Where the PTS steps run: one trait, implemented by the simulator ([`super::Simulated`]) and
//! by fio against a real target ([`super::Fio`]).

use serde::Serialize;

use super::plan::Job;

/// Why a PTS run stopped.
#[derive(Debug, thiserror::Error)]
pub enum PtsError {
    /// The settings make no sense.
    #[error("{0}")]
    Settings(String),
    /// The target could not be opened or sized.
    #[error("{0}")]
    Target(String),
    /// A step failed (the simulator or fio said why).
    #[error("{job}: {reason}")]
    Step {
        /// The step's label.
        job: String,
        /// What went wrong.
        reason: String,
    },
    /// fio's JSON output could not be read.
    #[error("{0}")]
    FioOutput(String),
}

/// What one step measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Measured {
    /// Read commands completed per second.
    pub read_iops: f64,
    /// Write commands completed per second.
    pub write_iops: f64,
    /// Bytes written.
    pub bytes_written: u64,
    /// How long it ran, seconds (simulated time on a simulated device).
    pub seconds: f64,
}

impl Measured {
    /// Reads and writes per second.
    pub fn iops(&self) -> f64 {
        self.read_iops + self.write_iops
    }
}

/// Runs PTS steps on one device, which keeps its state from step to step.
///
/// The caller purges first, then runs steps one after another; the implementer runs each step
/// to its end (its time, or its loops over the whole device) before returning, and never
/// changes the device between steps on its own.
pub trait Executor {
    /// What the device is, for the report (`consumer-tlc (simulated, seed 1)`).
    fn describe(&self) -> String;
    /// The user capacity in bytes.
    fn capacity(&self) -> u64;
    /// Returns the device to a state as if never written (PTS purge), as far as the target
    /// allows; says what was done (or why nothing could be).
    fn purge(&mut self) -> Result<String, PtsError>;
    /// Runs one step to its end.
    fn run(&mut self, job: &Job) -> Result<Measured, PtsError>;
}
