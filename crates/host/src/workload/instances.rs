//! [`instantiate`]: every clone of every job, each with its own stream and seed, ready for the
//! driver to give each one an NVMe queue pair.

use super::error::JobError;
use super::permute::mix64;
use super::spec::{JobSpec, MAX_JOBS};
use super::stream::JobStream;

/// One running clone of a job: what the driver attaches to one NVMe queue pair.
#[derive(Clone, Debug)]
pub struct JobInstance {
    /// Index of the job in the slice given to [`instantiate`].
    pub job: usize,
    /// Which of the job's `numjobs` clones this is (0-based).
    pub clone: u32,
    /// The clone's I/Os. Pacing fields (`iodepth`, `rate_*`, `runtime`, ...) are in
    /// `stream.spec()`.
    pub stream: JobStream,
}

/// The seed of job number `job` of a run seeded with `run_seed`: distinct jobs get unrelated
/// streams even when their options are identical.
pub fn job_seed(run_seed: u64, job: usize) -> u64 {
    mix64(run_seed ^ mix64(job as u64))
}

/// Checks every job against the device as [`instantiate`] does, without building their streams
/// (cheap: a caller can check the jobs before it spends minutes ageing the device): each job
/// is [valid](JobSpec::validate), and the jobs ask for at most [`MAX_JOBS`] clones in all.
pub fn check_jobs(jobs: &[JobSpec], device_capacity_bytes: u64, lba_size: u32) -> Result<(), JobError> {
    let mut clones = 0u64;
    for spec in jobs {
        spec.validate(device_capacity_bytes, lba_size)?;
        clones += spec.numjobs as u64;
        if clones > MAX_JOBS as u64 {
            return Err(JobError::Invalid {
                job: spec.name.clone(),
                option: "numjobs",
                message: format!("the jobs ask for more than {MAX_JOBS} clones in all (fio's limit)"),
            });
        }
    }
    Ok(())
}

/// Validates every job against the device ([`check_jobs`]) and expands `numjobs` (at most [`MAX_JOBS`] clones in
/// all): job `j`'s clones come out in order `0..numjobs`, jobs in the order given. Clone `c` of job `j` uses
/// `JobStream::new(spec, c, .., job_seed(run_seed, j))`.
pub fn instantiate(
    jobs: &[JobSpec],
    device_capacity_bytes: u64,
    lba_size: u32,
    run_seed: u64,
) -> Result<Vec<JobInstance>, JobError> {
    check_jobs(jobs, device_capacity_bytes, lba_size)?;
    let mut out = Vec::new();
    for (job, spec) in jobs.iter().enumerate() {
        for clone in 0..spec.numjobs {
            let seed = job_seed(run_seed, job);
            let stream = JobStream::new(spec, clone, device_capacity_bytes, lba_size, seed)?;
            out.push(JobInstance { job, clone, stream });
        }
    }
    Ok(out)
}
