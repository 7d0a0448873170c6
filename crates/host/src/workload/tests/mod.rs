//! Tests across the workload modules: every option through [`JobSpec::set`], job files end to
//! end, validation against a device, and seeded property loops over streams (each failure
//! message names the seed that produced it).

mod jobfile;
mod options;
mod properties;
mod streams;
mod validation;

use super::*;

/// A 1 GiB device with 512-byte LBAs.
const CAP: u64 = 1 << 30;
const LBA: u32 = 512;

/// A job built from `key=value` pairs through [`JobSpec::set`].
fn job(options: &[&str]) -> JobSpec {
    let mut j = JobSpec::new("t");
    for o in options {
        let (k, v) = o.split_once('=').map_or((*o, None), |(k, v)| (k, Some(v)));
        j.set(k, v).unwrap_or_else(|e| panic!("{o}: {e}"));
    }
    j
}

/// The first `n` I/Os of clone `clone` of `spec` on the test device.
fn take(spec: &JobSpec, clone: u32, seed: u64, n: usize) -> Vec<IoRequest> {
    let mut s = JobStream::new(spec, clone, CAP, LBA, seed).unwrap();
    std::iter::from_fn(|| s.next()).take(n).collect()
}
