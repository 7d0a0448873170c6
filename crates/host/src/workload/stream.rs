//! [`JobStream`]: the deterministic sequence of I/Os of one clone of a job.

use std::ops::Range;

use rand::{Rng, RngExt, SeedableRng};
use sim::SimRng;

use super::distribution::Distribution;
use super::error::JobError;
use super::permute::{Permutation, mix64};
use super::request::{IoOp, IoRequest, PerDir};
use super::sampler::SlotSampler;
use super::spec::{JobSpec, RwMode};
use super::validate::Plan;

/// How random offsets are drawn.
#[derive(Clone, Debug)]
enum RandomOffsets {
    /// Sequential job: no random offsets.
    None,
    /// Independent draws from the job's distribution.
    Draw(SlotSampler),
    /// fio's random map: a fresh random permutation of the slots per pass, so every slot is
    /// used exactly once per pass.
    Map { order: Permutation, next: u64 },
}

/// The I/Os of one clone of a job, generated on demand and the same for the same inputs.
///
/// Offsets lie in the clone's region `[offset + clone * offset_increment, + size)`, clamped to
/// the device, and are multiples of the LBA size. Random offsets are the region start plus a
/// multiple of the direction's `blockalign`, drawn from `random_distribution` over
/// `blockalign`-sized slots (an I/O that would run past the region end moves back to the last
/// aligned position where it fits). Sequential directions each keep a position that starts at the
/// region start and wraps to it when the next I/O would not fit, as in fio. Directions are mixed
/// by `rwmixread` with an independent draw per I/O; block sizes by their `bssplit` weights.
///
/// The stream ends (returns `None`) after `number_ios` I/Os or, unless the job is `time_based`,
/// once it has issued `io_size * loops` bytes. A `time_based` job without `number_ios` never
/// ends: the driver stops it when `ramp_time + runtime` has passed.
#[derive(Clone, Debug)]
pub struct JobStream {
    spec: JobSpec,
    clone: u32,
    plan: Plan,
    rng: SimRng,
    random: RandomOffsets,
    sequential: PerDir<u64>,
    issued: u64,
    bytes: u64,
    /// Placement identifiers: the next in turn, and the generator of random picks.
    pid_turn: usize,
    pid_rng: SimRng,
}

impl JobStream {
    /// The stream of clone `job_index` (0-based, below `numjobs`; it selects the clone's
    /// `offset_increment` slice and its random stream) of `spec` on a device of
    /// `device_capacity_bytes` bytes with `lba_size`-byte LBAs.
    ///
    /// Randomness comes only from `seed` (or the job's `randseed`, which replaces it), mixed with
    /// `job_index` so that clones differ. The caller must pass different seeds for different
    /// jobs of a file; [`instantiate`](super::instantiate) does that. Fails as
    /// [`JobSpec::validate`] does.
    pub fn new(
        spec: &JobSpec,
        job_index: u32,
        device_capacity_bytes: u64,
        lba_size: u32,
        seed: u64,
    ) -> Result<JobStream, JobError> {
        if job_index >= spec.numjobs {
            return Err(JobError::Invalid {
                job: spec.name.clone(),
                option: "numjobs",
                message: format!("clone {job_index} requested of a job with numjobs={}", spec.numjobs),
            });
        }
        spec.validate(device_capacity_bytes, lba_size)?;
        let plan = spec.plan(device_capacity_bytes, lba_size, job_index)?;
        let base = spec.randseed.unwrap_or(seed);
        let mut rng = SimRng::seed_from_u64(mix64(mix64(base) ^ job_index as u64));
        let slots = plan.len / plan.unit;
        let random = if !spec.rw.is_random() {
            RandomOffsets::None
        } else if Self::random_map_applies(spec, &plan) {
            RandomOffsets::Map { order: Permutation::new(slots, rng.next_u64()), next: 0 }
        } else {
            RandomOffsets::Draw(SlotSampler::new(&spec.random_distribution, slots))
        };
        Ok(JobStream {
            spec: spec.clone(),
            clone: job_index,
            plan,
            rng,
            random,
            sequential: PerDir::default(),
            issued: 0,
            bytes: 0,
            pid_turn: job_index as usize,
            pid_rng: SimRng::seed_from_u64(mix64(mix64(base ^ 0xfd9) ^ job_index as u64)),
        })
    }

    /// fio's random map needs uniform offsets, no `norandommap`, and every issued direction with
    /// one block size equal to the common slot size (so slots and I/Os coincide).
    fn random_map_applies(spec: &JobSpec, plan: &Plan) -> bool {
        spec.random_distribution == Distribution::Uniform
            && !spec.norandommap
            && IoOp::ALL.into_iter().filter(|&op| spec.rw.issues(op)).all(|op| {
                let dir = plan.dirs.get(op);
                dir.sizes.len() == 1 && dir.sizes[0].0 as u64 == plan.unit && dir.align == plan.unit
            })
    }

    /// The FDP placement identifier of the next write (`fdp_pli` in turn, or drawn with
    /// `plid_select=random` from a generator of its own: the I/Os stay those without it).
    pub fn next_pid(&mut self) -> Option<u16> {
        let n = self.spec.plids.len();
        if n == 0 {
            return None;
        }
        let k = if self.spec.plid_random {
            self.pid_rng.random_range(0..n)
        } else {
            let k = self.pid_turn % n;
            self.pid_turn += 1;
            k
        };
        Some(self.spec.plids[k])
    }

    /// The job this stream belongs to.
    pub fn spec(&self) -> &JobSpec {
        &self.spec
    }

    /// Which clone of the job this is (0-based).
    pub fn job_index(&self) -> u32 {
        self.clone
    }

    /// The byte range of the device this stream's I/Os fall in.
    pub fn region(&self) -> Range<u64> {
        self.plan.start..self.plan.start + self.plan.len
    }

    /// How many I/Os have been issued so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// How many bytes have been issued so far.
    pub fn bytes_issued(&self) -> u64 {
        self.bytes
    }

    /// The next I/O, or `None` once the job's count or byte budget is spent.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<IoRequest> {
        if self.spec.number_ios.is_some_and(|max| self.issued >= max)
            || self.plan.io_limit.is_some_and(|limit| self.bytes >= limit)
        {
            return None;
        }
        let op = self.pick_op();
        let len = self.pick_len(op);
        let relative = match self.random {
            RandomOffsets::None => self.sequential_offset(op, len),
            _ => self.random_offset(op, len),
        };
        self.issued += 1;
        self.bytes += len as u64;
        Some(IoRequest { op, offset: self.plan.start + relative, len })
    }

    fn pick_op(&mut self) -> IoOp {
        match self.spec.rw {
            RwMode::Read | RwMode::RandRead => IoOp::Read,
            RwMode::Write | RwMode::RandWrite => IoOp::Write,
            RwMode::Trim | RwMode::RandTrim => IoOp::Trim,
            RwMode::Rw | RwMode::RandRw if self.rng.random_range(0..100u32) < self.spec.rwmixread => {
                IoOp::Read
            }
            RwMode::Rw | RwMode::RandRw => IoOp::Write,
        }
    }

    fn pick_len(&mut self, op: IoOp) -> u32 {
        let sizes = &self.plan.dirs.get(op).sizes;
        if let [(only, _)] = sizes[..] {
            return only;
        }
        let w = self.rng.random_range(0..100u32);
        sizes.iter().find(|&&(_, until)| w < until).map_or(sizes[sizes.len() - 1].0, |&(b, _)| b)
    }

    fn sequential_offset(&mut self, op: IoOp, len: u32) -> u64 {
        let pos = self.sequential.get_mut(op);
        if *pos + len as u64 > self.plan.len {
            *pos = 0;
        }
        let at = *pos;
        *pos += len as u64;
        at
    }

    fn random_offset(&mut self, op: IoOp, len: u32) -> u64 {
        let unit = self.plan.unit;
        let slot = match &mut self.random {
            RandomOffsets::Map { order, next } => {
                if *next == order.len() {
                    *order = Permutation::new(order.len(), self.rng.next_u64());
                    *next = 0;
                }
                *next += 1;
                return order.apply(*next - 1) * unit;
            }
            RandomOffsets::Draw(sampler) => sampler.sample(&mut self.rng),
            RandomOffsets::None => unreachable!("sequential jobs draw no random offsets"),
        };
        let align = self.plan.dirs.get(op).align;
        let at = slot * unit / align * align;
        if at + len as u64 <= self.plan.len { at } else { (self.plan.len - len as u64) / align * align }
    }
}
