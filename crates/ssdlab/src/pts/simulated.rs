//! The simulated executor: one device in virtual time, the steps run one after another on it.

use firmware::config::DeviceConfig;
use firmware::platform::StoreChoice;
use host::run::{RunOptions, run_jobs_with};
use host::workload::{IoOp, JobSpec};

use super::executor::{Executor, Measured, PtsError};
use super::plan::Job;
use crate::{Rig, Start, prepare_rig};

/// A simulated device (any configuration `ssdlab run` accepts), built fresh by [`purge`].
///
/// [`purge`]: Executor::purge
pub struct Simulated {
    cfg: DeviceConfig,
    store: StoreChoice,
    seed: u64,
    rig: Option<Rig>,
    capacity: u64,
    /// Steps run so far: each gets its own seed, derived from the run's.
    steps: u64,
}

impl Simulated {
    /// A simulated device of configuration `cfg`; `seed` seeds the device and every step.
    /// Builds it once to check it and learn its capacity.
    pub fn new(cfg: DeviceConfig, store: StoreChoice, seed: u64) -> Result<Self, PtsError> {
        let mut s = Simulated { cfg, store, seed, rig: None, capacity: 0, steps: 0 };
        s.build()?;
        Ok(s)
    }

    fn build(&mut self) -> Result<(), PtsError> {
        self.rig = None; // free the old device first
        let rig = prepare_rig(&self.cfg, &self.store, self.seed, Start::Fresh, &mut |_, _| {})
            .map_err(|e| PtsError::Target(crate::message::one_line(&e)))?;
        let front = rig.system().front();
        self.capacity = front.capacity_lbas() * front.lba_bytes() as u64;
        self.rig = Some(rig);
        Ok(())
    }
}

impl Executor for Simulated {
    fn describe(&self) -> String {
        format!("{} (simulated, seed {})", self.cfg.name, self.seed)
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn purge(&mut self) -> Result<String, PtsError> {
        self.build()?;
        Ok("simulated: a factory-fresh device (every block erased, nothing mapped)".into())
    }

    fn run(&mut self, job: &Job) -> Result<Measured, PtsError> {
        let step_err = |reason: String| PtsError::Step { job: job.label.clone(), reason };
        let mut spec = JobSpec::new("pts");
        for (k, v) in job.options() {
            spec.set(k, Some(&v)).map_err(|e| step_err(e.to_string()))?;
        }
        self.steps += 1;
        let seed = self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(self.steps);
        let rig = self.rig.as_ref().expect("built in new");
        let sys = rig.system();
        let r = run_jobs_with(sys, &[spec], seed, &RunOptions::default(), &mut |_| {})
            .map_err(|e| step_err(crate::message::one_line(&e)))?;
        let seconds = r.window().as_secs_f64();
        let per_s = |n: u64| if seconds > 0.0 { n as f64 / seconds } else { 0.0 };
        let (read, write) = (r.op(IoOp::Read), r.op(IoOp::Write));
        if read.errors + write.errors > 0 {
            return Err(step_err(format!("{} commands failed", read.errors + write.errors)));
        }
        Ok(Measured {
            read_iops: per_s(read.count),
            write_iops: per_s(write.count),
            bytes_written: write.bytes,
            seconds,
        })
    }
}
