//! Running one I/O command: validate, split into mapping-unit sub-requests, run them
//! concurrently through the FTL, move the data over the link, and build the completion.

use nand::{DataTag, Lpn};
use sim::sync::oneshot;

use crate::flow::Point;
use crate::ftl::{MediaError, UnitData, UnitWrite};
use crate::hil::controller::Controller;
use crate::hil::link::Dir;
use crate::hil::nvme::{CommandTiming, HostData, NvmeCommand, NvmeCompletion, Opcode, Status};
use crate::hil::queues::Entry;
use crate::trace::Phases;

/// One sub-request: a mapping unit and the sectors of it the command covers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The unit.
    pub lpn: Lpn,
    /// First sector in the unit.
    pub first: u32,
    /// Sectors covered.
    pub sectors: u32,
}

/// A write command's unit writes (no allocation for the common small ones).
type UnitWrites = smallvec::SmallVec<[UnitWrite; 2]>;

/// A command's sub-requests (most commands touch a few units: no allocation for those).
pub type Parts = smallvec::SmallVec<[Part; 4]>;

/// Splits `nlb` blocks at `slba` into mapping-unit sub-requests (`spu` blocks per unit).
pub fn split(slba: u64, nlb: u32, spu: u32) -> Parts {
    let mut parts = Parts::new();
    let (mut lba, end) = (slba, slba + nlb as u64);
    while lba < end {
        let first = (lba % spu as u64) as u32;
        let sectors = ((spu - first) as u64).min(end - lba) as u32;
        parts.push(Part { lpn: Lpn((lba / spu as u64) as u32), first, sectors });
        lba += sectors as u64;
    }
    parts
}

impl Controller {
    /// The request reaches `point` of the architecture's flow.
    async fn enter(&self, point: Point) {
        if let Some(hop) = self.flow.hop(point, None) {
            hop.await;
        }
    }

    fn spu(&self) -> u32 {
        self.unit_bytes / self.lba_bytes
    }

    /// Validates a command before any work.
    fn check(&self, cmd: &NvmeCommand) -> Result<(), Status> {
        let in_range =
            |slba: u64, nlb: u32| slba.checked_add(nlb as u64).is_some_and(|e| e <= self.capacity_lbas);
        match cmd.opcode {
            Opcode::Flush => Ok(()),
            Opcode::DatasetManagement => {
                if cmd.ranges.is_empty() || cmd.ranges.len() > 256 {
                    return Err(Status::InvalidField(format!(
                        "{} ranges (1 to 256 allowed)",
                        cmd.ranges.len()
                    )));
                }
                if cmd.ranges.iter().all(|&(s, n)| in_range(s, n)) {
                    Ok(())
                } else {
                    Err(Status::LbaOutOfRange)
                }
            }
            Opcode::Read | Opcode::Write | Opcode::WriteZeroes => {
                if cmd.nlb == 0 {
                    return Err(Status::InvalidField("zero-length transfer".into()));
                }
                let bytes = cmd.nlb as u64 * self.lba_bytes as u64;
                if cmd.opcode != Opcode::WriteZeroes && bytes > self.cfg.max_transfer.bytes() {
                    return Err(Status::InvalidField(format!(
                        "{bytes} bytes exceed the maximum transfer size"
                    )));
                }
                if !in_range(cmd.slba, cmd.nlb) {
                    return Err(Status::LbaOutOfRange);
                }
                if cmd.opcode == Opcode::Write {
                    let units = split(cmd.slba, cmd.nlb, self.spu()).len();
                    let ok = match &cmd.data {
                        HostData::Bytes(b) => b.len() as u64 == bytes,
                        HostData::Tags(t) => !self.payload() && t.len() == units,
                        HostData::None => !self.payload(),
                    };
                    if !ok {
                        return Err(Status::InvalidField(
                            "write data does not match the transfer length".into(),
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// Runs a fetched command to its completion (not yet posted).
    pub(crate) async fn handle(&self, e: Entry) -> (oneshot::Sender<NvmeCompletion>, NvmeCompletion) {
        let start = self.cx.now();
        self.cx.set_request(Some(e.id));
        self.enter(Point::Fetch).await;
        let mut ph = Phases {
            queue_wait: e.fetch_start.since(e.submitted),
            fetch: e.fetched.since(e.fetch_start),
            worker_wait: start.since(e.fetched),
            ..Phases::default()
        };
        self.cx.compute(self.cfg.costs.parse).await;
        let (status, data) = match self.check(&e.cmd) {
            Err(s) => (s, HostData::None),
            Ok(()) => self.execute(&e.cmd, &mut ph).await,
        };
        self.enter(Point::Post).await;
        let done = self.cx.now();
        ph.firmware += done.since(start) - (ph.total() - ph.queue_wait - ph.fetch - ph.worker_wait);
        self.cx.compute(self.cfg.costs.completion).await;
        self.link.transfer(&self.cx, Dir::ToHost, 16).await;
        ph.completion += self.cx.now().since(done);
        self.account(&e.cmd, &status);
        let c = NvmeCompletion {
            status,
            data,
            timing: CommandTiming { id: e.id, submitted: e.submitted, completed: e.submitted },
            phases: ph,
        };
        self.cx.set_request(None);
        (e.reply, c)
    }

    fn account(&self, cmd: &NvmeCommand, status: &Status) {
        let mut s = self.smart.borrow_mut();
        let bytes = cmd.nlb as u64 * self.lba_bytes as u64;
        match (cmd.opcode, status) {
            (Opcode::Read, Status::Success) => {
                s.host_read_commands += 1;
                s.bytes_read += bytes;
            }
            (Opcode::Write, Status::Success) => {
                s.host_write_commands += 1;
                s.bytes_written += bytes;
            }
            (_, Status::UnrecoveredRead | Status::InternalError(_)) => s.media_errors += 1,
            _ => {}
        }
    }

    async fn execute(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData) {
        match cmd.opcode {
            Opcode::Read => self.read(cmd, ph).await,
            Opcode::Write => (self.write(cmd, ph).await, HostData::None),
            Opcode::Flush => {
                let t0 = self.cx.now();
                if !self.bypass {
                    self.ftl.flush().await;
                }
                ph.cache += self.cx.now().since(t0);
                (Status::Success, HostData::None)
            }
            Opcode::DatasetManagement => {
                let spu = self.spu();
                let units: Vec<Lpn> = cmd
                    .ranges
                    .iter()
                    .flat_map(|&(s, n)| split(s, n, spu))
                    .filter(|p| p.sectors == spu)
                    .map(|p| p.lpn)
                    .collect();
                self.trim(&units).await;
                (Status::Success, HostData::None)
            }
            Opcode::WriteZeroes => (self.write_zeroes(cmd, ph).await, HostData::None),
        }
    }

    async fn trim(&self, units: &[Lpn]) {
        if !self.bypass {
            self.flow.each(units.iter().map(|&lpn| self.ftl.trim(lpn))).await;
        }
    }

    async fn read(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData) {
        let parts = split(cmd.slba, cmd.nlb, self.spu());
        let lpns: smallvec::SmallVec<[Lpn; 4]> = parts.iter().map(|p| p.lpn).collect();
        let results: crate::ftl::UnitResults = if self.bypass {
            parts.iter().map(|_| Ok(UnitData::zero(self.payload(), self.unit_bytes as usize))).collect()
        } else {
            self.ftl.read_many(&lpns, ph).await
        };
        if let Some(Err(e)) = results.iter().find(|r| r.is_err()) {
            return (media_status(e), HostData::None);
        }
        let lba = self.lba_bytes as usize;
        let data = if self.payload() {
            let mut out = Vec::with_capacity(cmd.nlb as usize * lba);
            for (p, r) in parts.iter().zip(&results) {
                let Ok(UnitData::Bytes(b)) = r else { unreachable!("payload reads carry bytes") };
                out.extend_from_slice(&b[p.first as usize * lba..(p.first + p.sectors) as usize * lba]);
            }
            HostData::Bytes(out)
        } else {
            HostData::Tags(results.iter().map(|r| r.as_ref().map_or(DataTag(0), UnitData::tag)).collect())
        };
        self.dma(Dir::ToHost, cmd.nlb, ph).await;
        (Status::Success, data)
    }

    async fn write(&self, cmd: &NvmeCommand, ph: &mut Phases) -> Status {
        self.dma(Dir::ToDevice, cmd.nlb, ph).await;
        let spu = self.spu();
        let lba = self.lba_bytes as usize;
        let parts = split(cmd.slba, cmd.nlb, spu);
        let mut offset = 0;
        let writes: UnitWrites = parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let data = match &cmd.data {
                    HostData::Bytes(b) => {
                        let n = p.sectors as usize * lba;
                        offset += n;
                        UnitData::Bytes(b[offset - n..offset].into())
                    }
                    HostData::Tags(t) => UnitData::Tag(t[i]),
                    HostData::None => UnitData::Tag(DataTag(0)),
                };
                UnitWrite { lpn: p.lpn, first_sector: p.first, sectors: p.sectors, data }
            })
            .collect();
        self.write_units(writes, cmd.fua, ph).await
    }

    async fn write_units(&self, writes: UnitWrites, fua: bool, ph: &mut Phases) -> Status {
        if self.bypass {
            return Status::Success;
        }
        let ftl = &self.ftl;
        let (spu, lba) = (self.spu(), self.lba_bytes);
        if writes.len() == 1 {
            // The common case (a write within one unit): no join, nothing to pick a path from.
            let w = writes.into_iter().next().expect("one write");
            return match ftl.write(w, spu, lba, fua, ph).await {
                Ok(()) => Status::Success,
                Err(e) => media_status(&e),
            };
        }
        let one = |w| async move {
            let mut sub = Phases::default();
            let r = ftl.write(w, spu, lba, fua, &mut sub).await;
            (r, sub, self.cx.now())
        };
        let results: Vec<(Result<(), MediaError>, Phases, sim::SimTime)> =
            self.flow.each(writes.into_iter().map(one)).await;
        critical_path(ph, &results);
        match results.iter().find_map(|r| r.0.as_ref().err()) {
            Some(e) => media_status(e),
            None => Status::Success,
        }
    }

    async fn write_zeroes(&self, cmd: &NvmeCommand, ph: &mut Phases) -> Status {
        let spu = self.spu();
        let parts = split(cmd.slba, cmd.nlb, spu);
        let (full, partial): (Vec<Part>, Vec<Part>) = parts.into_iter().partition(|p| p.sectors == spu);
        self.trim(&full.iter().map(|p| p.lpn).collect::<Vec<_>>()).await;
        let lba = self.lba_bytes as usize;
        let zero = |p: &Part| {
            if self.payload() {
                UnitData::Bytes(std::iter::repeat_n(0, p.sectors as usize * lba).collect())
            } else {
                UnitData::Tag(DataTag(0))
            }
        };
        let writes = partial.iter().map(|p| UnitWrite {
            lpn: p.lpn,
            first_sector: p.first,
            sectors: p.sectors,
            data: zero(p),
        });
        self.write_units(writes.collect(), false, ph).await
    }

    /// Moves `nlb` blocks of data over the link.
    async fn dma(&self, dir: Dir, nlb: u32, ph: &mut Phases) {
        let t0 = self.cx.now();
        self.cx.compute(self.cfg.costs.dma).await;
        self.link.transfer(&self.cx, dir, nlb as u64 * self.lba_bytes as u64).await;
        ph.dma += self.cx.now().since(t0);
    }
}

/// Adds the phases of the sub-request that finished last (the command's critical path).
fn critical_path<T>(ph: &mut Phases, results: &[(T, Phases, sim::SimTime)]) {
    if let Some((_, sub, _)) = results.iter().max_by_key(|r| r.2) {
        *ph += *sub;
    }
}

fn media_status(e: &MediaError) -> Status {
    match e {
        MediaError::Uncorrectable => Status::UnrecoveredRead,
        MediaError::Store(s) => Status::InternalError(s.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_the_range_in_unit_pieces() {
        // 8 sectors per unit; blocks 5..21 cover units 0 (3 sectors), 1 (8), 2 (5).
        let p = split(5, 16, 8);
        assert_eq!(
            p.as_slice(),
            [
                Part { lpn: Lpn(0), first: 5, sectors: 3 },
                Part { lpn: Lpn(1), first: 0, sectors: 8 },
                Part { lpn: Lpn(2), first: 0, sectors: 5 },
            ]
        );
        assert_eq!(split(16, 8, 8).as_slice(), [Part { lpn: Lpn(2), first: 0, sectors: 8 }]);
    }
}
