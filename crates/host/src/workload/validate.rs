//! [`JobSpec::validate`]: a job checked against a device, and the byte-level plan the stream
//! follows (region, block sizes, alignment, budget).

use super::error::JobError;
use super::extent::Extent;
use super::request::{IoOp, PerDir};
use super::spec::{JobSpec, MAX_IODEPTH, MAX_JOBS};

/// How one direction picks its I/O lengths and random offsets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DirPlan {
    /// Block sizes in bytes with cumulative weights (the last is 100); empty if the job does not
    /// issue this direction.
    pub sizes: Vec<(u32, u32)>,
    /// Alignment of random offsets relative to the region start, bytes.
    pub align: u64,
}

/// A job resolved against a device, in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// First byte of the region.
    pub start: u64,
    /// Length of the region: a multiple of the LBA size, at least the largest block size and the
    /// largest alignment.
    pub len: u64,
    /// Size of the slots random offsets are drawn over: the smallest alignment of the issued
    /// directions.
    pub unit: u64,
    /// Per-direction sizes and alignment.
    pub dirs: PerDir<DirPlan>,
    /// Bytes to issue before the stream ends; `None` with `time_based`.
    pub io_limit: Option<u64>,
}

impl JobSpec {
    /// Checks that the job can run on a device of `device_capacity_bytes` bytes with `lba_size`
    /// byte LBAs, for every one of its `numjobs` clones: block sizes and alignments are multiples
    /// of the LBA size, the region starts inside the device and holds the largest block,
    /// `time_based` has a `runtime`. The error names the job and the option.
    pub fn validate(&self, device_capacity_bytes: u64, lba_size: u32) -> Result<(), JobError> {
        if let Some(z) = &self.zbd
            && let Some(size) = z.zonesize
        {
            for op in [IoOp::Read, IoOp::Write] {
                for (bs, _) in self.block_sizes(op).into_iter().filter(|_| self.rw.issues(op)) {
                    if !size.is_multiple_of(bs.bytes()) {
                        let msg = format!("{} is not a multiple of the block size {bs}", sim::ByteSize(size));
                        return Err(self.invalid("zonesize", msg));
                    }
                }
            }
        }
        if self.fdp && self.plids.is_empty() {
            let msg = "fdp=1 needs the placement identifiers to use (fdp_pli=0,1,... ); ssdlab does not read them from the device".into();
            return Err(self.invalid("fdp_pli", msg));
        }
        if !self.plids.is_empty() && !self.fdp {
            return Err(
                self.invalid("fdp_pli", "placement identifiers need fdp=1 (or dataplacement=fdp)".into())
            );
        }
        if self.fdp && self.placement.is_some() {
            return Err(self.invalid("placement", "give placement or fdp_pli, not both".into()));
        }
        self.plan(device_capacity_bytes, lba_size, 0)?;
        self.plan(device_capacity_bytes, lba_size, self.numjobs.saturating_sub(1)).map(drop)
    }

    /// Fails if the job's `size` is a byte count larger than a device of `device_capacity_bytes`
    /// bytes. [`validate`](Self::validate) allows it (the region is cut to the device, as fio's
    /// defaults and ssdlab's default job rely on); a caller whose user wrote the size calls this
    /// too, because such a run is the same as one without `size`.
    pub fn check_size(&self, device_capacity_bytes: u64) -> Result<(), JobError> {
        match self.size {
            Some(Extent::Bytes(b)) if b.bytes() > device_capacity_bytes => {
                let capacity = sim::ByteSize(device_capacity_bytes);
                let msg = format!(
                    "{b} is larger than the device's capacity of {capacity:#} ({device_capacity_bytes} bytes)"
                );
                Err(self.invalid("size", msg))
            }
            _ => Ok(()),
        }
    }

    fn invalid(&self, option: &'static str, message: String) -> JobError {
        JobError::Invalid { job: self.name.clone(), option, message }
    }

    /// The plan of clone `clone` (0-based, below `numjobs`) on the given device.
    pub(crate) fn plan(&self, capacity: u64, lba_size: u32, clone: u32) -> Result<Plan, JobError> {
        let lba = lba_size as u64;
        if lba == 0 || capacity < lba {
            return Err(
                self.invalid("size", format!("the device ({capacity} bytes, {lba}-byte LBAs) is empty"))
            );
        }
        if self.time_based && self.runtime.is_none() {
            return Err(self.invalid("time_based", "needs a runtime".into()));
        }
        if self.iodepth == 0 || self.numjobs == 0 || self.loops == 0 {
            return Err(self.invalid("iodepth", "iodepth, numjobs and loops must be at least 1".into()));
        }
        if self.iodepth > MAX_IODEPTH {
            let msg = format!("{} is above {MAX_IODEPTH}, the most an NVMe queue can hold", self.iodepth);
            return Err(self.invalid("iodepth", msg));
        }
        if self.numjobs > MAX_JOBS {
            return Err(
                self.invalid("numjobs", format!("{} is above the limit of {MAX_JOBS} (fio's)", self.numjobs))
            );
        }
        if self.rwmixread > 100 {
            return Err(self.invalid("rwmixread", format!("{}% is above 100%", self.rwmixread)));
        }
        let mut dirs = PerDir::<DirPlan>::default();
        let (mut max_block, mut max_align, mut unit) = (0u64, 0u64, u64::MAX);
        for op in IoOp::ALL.into_iter().filter(|&op| self.rw.issues(op)) {
            let option = if self.bssplit.get(op).is_some() { "bssplit" } else { "bs" };
            let mut cumulative = 0;
            let mut sizes = Vec::new();
            for (size, weight) in self.block_sizes(op) {
                let b = size.bytes();
                let why = match b {
                    0 => "must be above 0".to_string(),
                    b if b > u32::MAX as u64 => "is 4GiB or more".to_string(),
                    b if !b.is_multiple_of(lba) => format!("is not a multiple of the {lba}-byte LBA size"),
                    _ => String::new(),
                };
                if !why.is_empty() {
                    return Err(self.invalid(option, format!("{} block size {b} {why}", op.name())));
                }
                cumulative += weight;
                sizes.push((b as u32, cumulative));
                max_block = max_block.max(b);
            }
            if cumulative != 100 {
                return Err(
                    self.invalid(option, format!("{} weights add up to {cumulative}, not 100", op.name()))
                );
            }
            let min = sizes.iter().map(|&(b, _)| b as u64).min().unwrap_or(lba);
            let align = self.blockalign.get(op).map_or(min, |a| a.bytes());
            if align == 0 || !align.is_multiple_of(lba) {
                let msg =
                    format!("{} alignment {align} is not a multiple of the {lba}-byte LBA size", op.name());
                return Err(self.invalid("blockalign", msg));
            }
            max_align = max_align.max(align);
            unit = unit.min(align);
            *dirs.get_mut(op) = DirPlan { sizes, align };
        }
        let place =
            |option: &'static str, e: Extent| match e {
                Extent::Bytes(b) if !b.bytes().is_multiple_of(lba) => Err(self
                    .invalid(option, format!("{} is not a multiple of the {lba}-byte LBA size", b.bytes()))),
                Extent::Bytes(b) => Ok(b.bytes()),
                Extent::Percent(_) => Ok(e.resolve(capacity) / max_align * max_align),
            };
        let base = place("offset", self.offset)?;
        let step = place("offset_increment", self.offset_increment)?;
        let start = (step as u128 * clone as u128 + base as u128).min(u64::MAX as u128) as u64;
        if start >= capacity {
            let who = if clone > 0 { format!("clone {clone} of the job") } else { "the job".into() };
            let msg = format!("{who} starts at byte {start}, past the end of the {capacity}-byte device");
            return Err(self.invalid(if clone > 0 { "offset_increment" } else { "offset" }, msg));
        }
        let room = capacity - start;
        let len = self.size.map_or(room, |s| s.resolve(capacity).min(room)) / lba * lba;
        let need = max_block.max(max_align);
        if len < need {
            let msg = format!("the region holds {len} bytes, less than one {need}-byte block");
            return Err(self.invalid("size", msg));
        }
        let io_limit = match self.time_based {
            true => None,
            false => {
                let per_loop = self.io_size.map_or(len, |e| e.resolve(len));
                if per_loop == 0 {
                    return Err(self.invalid("io_size", "comes to 0 bytes".into()));
                }
                Some(per_loop.saturating_mul(self.loops as u64))
            }
        };
        Ok(Plan { start, len, unit, dirs, io_limit })
    }
}
