//! Running one I/O command: validate, split into mapping-unit sub-requests, run them
//! concurrently through the FTL, move the data over the link, and build the completion.

use nand::Lpn;
use sim::sync::oneshot;

use crate::flow::Point;
use crate::ftl::{MediaError, UnitData, UnitWrite};
use crate::hil::controller::Controller;
use crate::hil::link::Dir;
use crate::hil::namespace::media_status;
use crate::hil::nvme::{CommandTiming, HostData, NvmeCommand, NvmeCompletion, Opcode, Placement, Status};
use crate::hil::queues::Entry;
use crate::trace::Phases;

/// A write command's unit writes (no allocation for the common small ones).
type UnitWrites = smallvec::SmallVec<[UnitWrite; 2]>;

impl Controller {
    /// The request reaches `point` of the architecture's flow.
    async fn enter(&self, point: Point) {
        if let Some(hop) = self.flow.hop(point, None) {
            hop.await;
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
        let (status, data, result) = match self.ns.check(&e.cmd) {
            Err(s) => (s, HostData::None, 0),
            Ok(()) => self.execute(&e.cmd, &mut ph).await,
        };
        self.enter(Point::Post).await;
        let done = self.cx.now();
        ph.firmware += done.since(start) - (ph.total() - ph.queue_wait - ph.fetch - ph.worker_wait);
        self.cx.compute(self.cfg.costs.completion).await;
        self.link.transfer(&self.cx, Dir::ToHost, 16).await;
        ph.completion += self.cx.now().since(done);
        self.smart.borrow_mut().account(&e.cmd, &status, self.ns.lba_bytes);
        let c = NvmeCompletion {
            status,
            data,
            timing: CommandTiming { id: e.id, submitted: e.submitted, completed: e.submitted },
            phases: ph,
            result,
        };
        self.cx.set_request(None);
        (e.reply, c)
    }

    /// Runs a checked command: its status, read data and command-specific result.
    async fn execute(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData, u64) {
        let writes = matches!(
            cmd.opcode,
            Opcode::Write | Opcode::WriteZeroes | Opcode::DatasetManagement | Opcode::ZoneAppend
        );
        if writes && !self.bypass && self.ftl.read_only() {
            return (Status::WriteProtected, HostData::None, 0);
        }
        if self.zones.is_some() && !self.bypass {
            return self.zoned(cmd, ph).await;
        }
        let (status, data) = match cmd.opcode {
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
                self.trim(&self.ns.trimmed_units(cmd), cmd.sq).await;
                (Status::Success, HostData::None)
            }
            Opcode::WriteZeroes => (self.write_zeroes(cmd, ph).await, HostData::None),
            Opcode::ZoneAppend | Opcode::ZoneManagementSend | Opcode::ZoneManagementReceive => {
                (Status::InvalidOpcode, HostData::None)
            }
        };
        (status, data, 0)
    }

    async fn trim(&self, units: &[Lpn], sq: u16) {
        if !self.bypass {
            self.flow.each(units.iter().map(|&lpn| self.ftl.trim(lpn, sq))).await;
        }
    }

    async fn read(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData) {
        let parts = self.ns.split(cmd.slba, cmd.nlb);
        let lpns: smallvec::SmallVec<[Lpn; 4]> = parts.iter().map(|p| p.lpn).collect();
        let results: crate::ftl::UnitResults = if self.bypass {
            parts.iter().map(|_| Ok(UnitData::zero(self.ns.payload, self.ns.unit_bytes as usize))).collect()
        } else {
            self.ftl.read_many(&lpns, cmd.sq, ph).await
        };
        let data = match self.ns.read_data(&parts, &results) {
            Ok(data) => data,
            Err(status) => return (status, HostData::None),
        };
        self.dma(Dir::ToHost, cmd.nlb, ph).await;
        (Status::Success, data)
    }

    async fn write(&self, cmd: &NvmeCommand, ph: &mut Phases) -> Status {
        // FDP: a placement identifier the namespace does not have is refused before any work.
        if let Some(Placement::Pid(p)) = cmd.placement
            && !self.bypass
            && !self.ftl.pid_valid(p)
        {
            self.ftl.invalid_pid(p);
            return Status::InvalidPlacementHandle(p);
        }
        self.dma(Dir::ToDevice, cmd.nlb, ph).await;
        self.write_units(self.ns.unit_writes(cmd).collect(), cmd.fua, ph).await
    }

    async fn write_units(&self, writes: UnitWrites, fua: bool, ph: &mut Phases) -> Status {
        if self.bypass {
            return Status::Success;
        }
        let ftl = &self.ftl;
        let (spu, lba) = (self.ns.spu(), self.ns.lba_bytes);
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
        if self.flow.migrates() {
            // `each` ran them one after another: every one is on the command's path.
            for (_, sub, _) in &results {
                *ph += *sub;
            }
        } else {
            critical_path(ph, &results);
        }
        match results.iter().find_map(|r| r.0.as_ref().err()) {
            Some(e) => media_status(e),
            None => Status::Success,
        }
    }

    async fn write_zeroes(&self, cmd: &NvmeCommand, ph: &mut Phases) -> Status {
        self.trim(&self.ns.trimmed_units(cmd), cmd.sq).await;
        self.write_units(self.ns.unit_writes(cmd).collect(), false, ph).await
    }

    /// Moves `nlb` blocks of data over the link.
    pub(crate) async fn dma(&self, dir: Dir, nlb: u32, ph: &mut Phases) {
        let t0 = self.cx.now();
        self.cx.compute(self.cfg.costs.dma).await;
        self.link.transfer(&self.cx, dir, self.ns.bytes(nlb)).await;
        ph.dma += self.cx.now().since(t0);
    }
}

/// Adds the phases of the sub-request that finished last (the command's critical path, when
/// they ran concurrently).
fn critical_path<T>(ph: &mut Phases, results: &[(T, Phases, sim::SimTime)]) {
    if let Some((_, sub, _)) = results.iter().max_by_key(|r| r.2) {
        *ph += *sub;
    }
}
