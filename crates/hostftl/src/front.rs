//! The host-side FTL's block driver: what host threads submit to. Each command costs host CPU
//! (system call, block layer; completion) on the submitting thread's core, then runs through
//! the FTL, whose work also runs there.

use std::cell::{Cell, RefCell};

use std::rc::Rc;

use firmware::ftl::{UnitData, UnitWrite};
use firmware::hil::{
    CommandTiming, HostData, NvmeCommand, NvmeCompletion, Opcode, SmartCounters, Status, split,
};
use firmware::system::{BlockFront, FrontFuture, HostStack, QueueSet, check_command};
use firmware::trace::Phases;
use nand::{DataTag, Lpn};
use sim::Cx;

use crate::ftl::HostFtl;

/// The block driver of a host-side FTL.
pub struct HostFtlFront {
    cx: Cx,
    ftl: HostFtl,
    host: Rc<HostStack>,
    lba_bytes: u32,
    max_transfer: u64,
    queues: QueueSet,
    completed: Cell<u64>,
    next_id: Cell<u64>,
    smart: RefCell<SmartCounters>,
}

impl HostFtlFront {
    /// A driver for `ftl` with `queues` queues, `lba_bytes` blocks and transfers of at most
    /// `max_transfer` bytes.
    pub fn new(
        cx: &Cx,
        ftl: HostFtl,
        host: Rc<HostStack>,
        queues: u32,
        lba_bytes: u32,
        max_transfer: u64,
    ) -> Self {
        HostFtlFront {
            cx: cx.clone(),
            ftl,
            host,
            lba_bytes,
            max_transfer,
            queues: QueueSet::new(queues),
            completed: Cell::new(0),
            next_id: Cell::new(0),
            smart: RefCell::new(SmartCounters::default()),
        }
    }

    /// The SMART counters so far.
    pub fn smart(&self) -> SmartCounters {
        self.smart.borrow().clone()
    }

    fn spu(&self) -> u32 {
        self.ftl.inner.geo.unit_bytes() / self.lba_bytes
    }

    async fn run(&self, qid: u16, cmd: NvmeCommand) -> NvmeCompletion {
        let submitted = self.cx.now();
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let mut ph = Phases::default();
        if !self.has_queue(qid) {
            let timing = CommandTiming { id, submitted, completed: submitted };
            return NvmeCompletion { status: Status::InvalidQueue, data: HostData::None, timing, phases: ph };
        }
        let hint = qid as usize;
        self.host.submit(hint).await;
        let checked =
            check_command(&cmd, self.capacity_lbas(), self.lba_bytes, self.max_transfer).and_then(|()| {
                match cmd.placement {
                    Some(p) => self.ftl.check_placement(p).map_err(|e| Status::InvalidField(e.to_string())),
                    None => Ok(()),
                }
            });
        let (status, data) = match checked {
            Err(s) => (s, HostData::None),
            Ok(()) => self.execute(&cmd, &mut ph).await,
        };
        self.host.complete(hint).await;
        self.account(&cmd, &status);
        self.completed.set(self.completed.get() + 1);
        let completed = self.cx.now();
        let total = completed.since(submitted);
        let others = ph.fil_wait + ph.command + ph.dma + ph.cache;
        ph.firmware = sim::SimDuration::from_nanos(total.as_nanos().saturating_sub(others.as_nanos()));
        NvmeCompletion { status, data, timing: CommandTiming { id, submitted, completed }, phases: ph }
    }

    async fn execute(&self, cmd: &NvmeCommand, ph: &mut Phases) -> (Status, HostData) {
        let spu = self.spu();
        let lba = self.lba_bytes as usize;
        match cmd.opcode {
            Opcode::Read => {
                let parts = split(cmd.slba, cmd.nlb, spu);
                let lpns: Vec<Lpn> = parts.iter().map(|p| p.lpn).collect();
                let units = self.ftl.read(&lpns, ph).await;
                if let Some(Err(e)) = units.iter().find(|u| u.is_err()) {
                    return (Status::InternalError(e.to_string()), HostData::None);
                }
                let data = if self.payload() {
                    let mut out = Vec::with_capacity(cmd.nlb as usize * lba);
                    for (p, u) in parts.iter().zip(&units) {
                        let Ok(UnitData::Bytes(b)) = u else { unreachable!("payload reads carry bytes") };
                        out.extend_from_slice(
                            &b[p.first as usize * lba..(p.first + p.sectors) as usize * lba],
                        );
                    }
                    HostData::Bytes(out)
                } else {
                    HostData::Tags(
                        units.iter().map(|u| u.as_ref().map_or(DataTag(0), UnitData::tag)).collect(),
                    )
                };
                (Status::Success, data)
            }
            Opcode::Write | Opcode::WriteZeroes => {
                let parts = split(cmd.slba, cmd.nlb, spu);
                if cmd.opcode == Opcode::WriteZeroes {
                    for p in parts.iter().filter(|p| p.sectors == spu) {
                        self.ftl.trim(p.lpn);
                    }
                }
                let mut offset = 0;
                let writes: Vec<UnitWrite> = parts
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| cmd.opcode == Opcode::Write || p.sectors < spu)
                    .map(|(i, p)| {
                        let n = p.sectors as usize * lba;
                        let data = match (&cmd.data, cmd.opcode) {
                            (_, Opcode::WriteZeroes) if self.payload() => UnitData::Bytes(vec![0; n].into()),
                            (_, Opcode::WriteZeroes) => UnitData::Tag(DataTag(0)),
                            (HostData::Bytes(b), _) => {
                                offset += n;
                                UnitData::Bytes(b[offset - n..offset].into())
                            }
                            (HostData::Tags(t), _) => UnitData::Tag(t.get(i).copied().unwrap_or_default()),
                            (HostData::None, _) => UnitData::Tag(DataTag(0)),
                        };
                        UnitWrite { lpn: p.lpn, first_sector: p.first, sectors: p.sectors, data }
                    })
                    .collect();
                match self.ftl.write(writes, self.lba_bytes, cmd.placement, cmd.fua, ph).await {
                    Ok(()) => (Status::Success, HostData::None),
                    Err(e) => (Status::InternalError(e), HostData::None),
                }
            }
            Opcode::Flush => {
                self.ftl.flush().await;
                (Status::Success, HostData::None)
            }
            Opcode::DatasetManagement => {
                for &(s, n) in &cmd.ranges {
                    for p in split(s, n, spu).iter().filter(|p| p.sectors == spu) {
                        self.ftl.trim(p.lpn);
                    }
                }
                (Status::Success, HostData::None)
            }
        }
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
            (_, Status::InternalError(_)) => s.media_errors += 1,
            _ => {}
        }
    }
}

impl BlockFront for HostFtlFront {
    fn cx(&self) -> &Cx {
        &self.cx
    }

    fn capacity_lbas(&self) -> u64 {
        self.ftl.logical_units() as u64 * self.spu() as u64
    }

    fn lba_bytes(&self) -> u32 {
        self.lba_bytes
    }

    fn unit_bytes(&self) -> u32 {
        self.ftl.inner.geo.unit_bytes()
    }

    fn payload(&self) -> bool {
        self.ftl.inner.payload
    }

    fn completed(&self) -> u64 {
        self.completed.get()
    }

    fn has_queue(&self, qid: u16) -> bool {
        self.queues.has(qid)
    }

    fn create_queue(&self, qid: u16) -> FrontFuture<'_, Result<(), String>> {
        Box::pin(async move { self.queues.create(qid) })
    }

    fn submit(&self, qid: u16, cmd: NvmeCommand) -> FrontFuture<'_, NvmeCompletion> {
        Box::pin(self.run(qid, cmd))
    }
}
