//! Flash transactions: what the FTL asks of the FIL, and what comes back.

use nand::{Oob, PageIdx};
use serde::{Deserialize, Serialize};
use sim::{SimDuration, SimTime};

/// The flash operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlashOp {
    /// Page read: command, array read (tR), data out.
    Read,
    /// Page program: command and data in, array program (tPROG).
    Program,
    /// Block erase: command, array erase (tBERS).
    Erase,
}

/// Who asked: the source decides which queue a transaction waits in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TxnSource {
    /// Host data.
    User,
    /// Translation pages (DFTL).
    Mapping,
    /// Garbage collection and wear levelling.
    Gc,
}

/// A short name for a transaction in traces (`read user`, `program gc`, `erase mapping`).
pub fn trace_label(op: FlashOp, source: TxnSource) -> &'static str {
    use FlashOp::*;
    use TxnSource::*;
    match (op, source) {
        (Read, User) => "read user",
        (Read, Mapping) => "read mapping",
        (Read, Gc) => "read gc",
        (Program, User) => "program user",
        (Program, Mapping) => "program mapping",
        (Program, Gc) => "program gc",
        (Erase, User) => "erase user",
        (Erase, Mapping) => "erase mapping",
        (Erase, Gc) => "erase gc",
    }
}

/// The seven per-die queues: (mapping, user, GC) x (read, write), and erase.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueKind {
    /// Translation-page reads.
    MappingRead,
    /// Host reads.
    UserRead,
    /// GC reads.
    GcRead,
    /// Translation-page programs.
    MappingWrite,
    /// Host programs.
    UserWrite,
    /// GC programs.
    GcWrite,
    /// Erases (any source).
    Erase,
}

impl QueueKind {
    /// Every queue kind, in the default priority order.
    pub const ALL: [QueueKind; 7] = [
        QueueKind::MappingRead,
        QueueKind::UserRead,
        QueueKind::GcRead,
        QueueKind::MappingWrite,
        QueueKind::UserWrite,
        QueueKind::GcWrite,
        QueueKind::Erase,
    ];

    /// The queue a transaction of `op` from `source` waits in.
    pub fn of(op: FlashOp, source: TxnSource) -> QueueKind {
        match (op, source) {
            (FlashOp::Erase, _) => QueueKind::Erase,
            (FlashOp::Read, TxnSource::Mapping) => QueueKind::MappingRead,
            (FlashOp::Read, TxnSource::User) => QueueKind::UserRead,
            (FlashOp::Read, TxnSource::Gc) => QueueKind::GcRead,
            (FlashOp::Program, TxnSource::Mapping) => QueueKind::MappingWrite,
            (FlashOp::Program, TxnSource::User) => QueueKind::UserWrite,
            (FlashOp::Program, TxnSource::Gc) => QueueKind::GcWrite,
        }
    }

    /// Position in [`QueueKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The operation of every transaction in this queue.
    pub fn op(self) -> FlashOp {
        match self {
            QueueKind::MappingRead | QueueKind::UserRead | QueueKind::GcRead => FlashOp::Read,
            QueueKind::MappingWrite | QueueKind::UserWrite | QueueKind::GcWrite => FlashOp::Program,
            QueueKind::Erase => FlashOp::Erase,
        }
    }
}

/// What to program: one OOB slot per mapping unit and, for payload stores, the page's data.
#[derive(Clone, Debug)]
pub struct PageWrite {
    /// LPNs and tags of the units.
    pub oob: Oob,
    /// One whole page of data, or `None` in metadata-only mode.
    pub data: Option<Box<[u8]>>,
}

/// A request to the FIL.
#[derive(Debug)]
pub struct FlashRequest {
    /// The operation.
    pub op: FlashOp,
    /// Who asked.
    pub source: TxnSource,
    /// The page (for an erase: any page of the block).
    pub page: PageIdx,
    /// Bytes moved over the channel for a read (0 = the whole page with its OOB).
    pub xfer_bytes: u32,
    /// For a read: copy the payload out (payload stores only).
    pub want_data: bool,
    /// For a read with `want_data`: also the OOB fields the store keeps (tags, sequence and
    /// first-write numbers; the LPNs come regardless). A reader that needs the bytes alone
    /// clears it and saves the store an access.
    pub want_oob: bool,
    /// For a read with `want_data`: also the page's ECC parity, where the array keeps it
    /// (payload mode with the error model: the ECC decodes the bytes read).
    pub want_parity: bool,
    /// For a program: what to write.
    pub write: Option<PageWrite>,
    /// The flow it is done for, as a [`FlowTag`] (`FlowTag::NONE`: no flow): bookkeeping
    /// only, the FIL counts it per flow and schedules it like any other.
    pub flow: FlowTag,
}

/// Which flow (tenant, issue 30) caused a transaction: flow `f` (0-based, in the order of the
/// jobs) is tag `f + 1`; tag 0 is no flow (preconditioning, translation-page write-back, wear
/// levelling, refresh, a single-flow run). See docs/multi-tenant.md for the attribution rule.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowTag(pub u8);

impl FlowTag {
    /// No flow: the unattributed bucket.
    pub const NONE: FlowTag = FlowTag(0);

    /// Flows the tags tell apart.
    pub const FLOWS: usize = 255;

    /// The tag of flow `f` (0-based; flows past the last, [`FLOWS`](Self::FLOWS), share its
    /// tag, and a run with that many flows is not attributed).
    pub fn of_flow(f: u32) -> FlowTag {
        FlowTag(f.min(254) as u8 + 1)
    }
}

impl FlashRequest {
    /// A whole-page read.
    pub fn read(source: TxnSource, page: PageIdx) -> Self {
        Self::new(FlashOp::Read, source, page, None)
    }

    /// A program of `write` into `page`.
    pub fn program(source: TxnSource, page: PageIdx, write: PageWrite) -> Self {
        Self::new(FlashOp::Program, source, page, Some(write))
    }

    /// An erase of the block holding `page`.
    pub fn erase(source: TxnSource, page: PageIdx) -> Self {
        Self::new(FlashOp::Erase, source, page, None)
    }

    /// The same request, done for `flow`.
    pub fn for_flow(self, flow: FlowTag) -> Self {
        FlashRequest { flow, ..self }
    }

    /// Whole-page transfer, no payload copied out, the store's OOB fields included.
    fn new(op: FlashOp, source: TxnSource, page: PageIdx, write: Option<PageWrite>) -> Self {
        FlashRequest {
            op,
            source,
            page,
            xfer_bytes: 0,
            want_data: false,
            want_oob: true,
            want_parity: false,
            write,
            flow: FlowTag::NONE,
        }
    }
}

/// How a transaction ended. Device outcomes are values, not Rust errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlashStatus {
    /// Done.
    Ok,
    /// The page store failed (a host I/O error under a NAND image).
    StoreError(String),
    /// The NAND reported a failed program (the error model's wear-out; set by the FTL when the
    /// program completes): the page holds nothing usable and its block must be retired.
    ProgramFailed,
    /// The NAND reported a failed erase (likewise): the block is a grown bad block.
    EraseFailed,
}

/// When each phase of a transaction happened.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TxnTiming {
    /// The FTL called submit.
    pub submitted: SimTime,
    /// The FIL took it off the available ring.
    pub queued: SimTime,
    /// Its command phase started (die and channel granted).
    pub dispatched: SimTime,
    /// Its array phase (tR, tPROG, tBERS) ended.
    pub array_done: SimTime,
    /// Its data transfer started (reads: data out; programs: data in, = dispatched).
    pub xfer_start: SimTime,
    /// Its data transfer ended.
    pub xfer_end: SimTime,
    /// The FIL posted the completion.
    pub completed: SimTime,
}

impl TxnTiming {
    /// Submit to FIL intake (ring cost and notification latency).
    pub fn ring(&self) -> SimDuration {
        self.queued.saturating_since(self.submitted)
    }
    /// Time in the FIL's queue waiting for the die and channel.
    pub fn queue_wait(&self) -> SimDuration {
        self.dispatched.saturating_since(self.queued)
    }
    /// For reads: time between the end of tR and the start of data out (channel busy).
    pub fn channel_wait(&self) -> SimDuration {
        self.xfer_start.saturating_since(self.array_done)
    }
    /// Channel time moving data (reads: data out; programs: data in).
    pub fn transfer(&self) -> SimDuration {
        self.xfer_end.saturating_since(self.xfer_start)
    }
    /// Die time that is neither transfer nor waiting for the channel: command setup and the
    /// array operation (for cache programs, also the wait for the array).
    pub fn command(&self) -> SimDuration {
        let end = self.array_done.max(self.xfer_end);
        end.saturating_since(self.dispatched) - self.transfer() - self.channel_wait()
    }
}

/// What became of a transaction: the fields of the FIL's answer ([`TxnResult`] derefs to it).
#[derive(Debug)]
pub struct TxnOutcome {
    /// Outcome.
    pub status: FlashStatus,
    /// Phase instants.
    pub timing: TxnTiming,
    /// For reads: the page's OOB (LPNs and tags).
    pub oob: Option<Oob>,
    /// For reads with `want_data` on a payload store: the page.
    pub data: Option<Box<[u8]>>,
    /// For reads with `want_parity` on a store that keeps parity: the page's ECC parity.
    pub parity: Option<Box<[u8]>>,
    /// For programs: the page's sequence number.
    pub seq: u64,
}

/// The FIL's answer: the finished transaction, read through [`TxnOutcome`]'s fields
/// (`r.status`, `r.timing`, ...). It owns the transaction it answers, so handing it on moves
/// a pointer, not the OOB and timing it carries.
pub struct TxnResult(pub(crate) Box<Txn>);

impl std::ops::Deref for TxnResult {
    type Target = TxnOutcome;
    fn deref(&self) -> &TxnOutcome {
        &self.0.out
    }
}

impl TxnResult {
    /// Sets the status the NAND reported for the operation (the FTL's wear-out draws: see
    /// [`FlashStatus::ProgramFailed`]).
    pub fn set_status(&mut self, status: FlashStatus) {
        self.0.out.status = status;
    }

    /// The page read and its ECC parity, to correct in place (either `None` where the read
    /// returned none).
    pub(crate) fn bytes_mut(&mut self) -> (Option<&mut [u8]>, Option<&mut [u8]>) {
        let out = &mut self.0.out;
        (out.data.as_deref_mut(), out.parity.as_deref_mut())
    }

    /// The request this answers.
    pub fn request(&self) -> &FlashRequest {
        &self.0.req
    }
}

impl std::fmt::Debug for TxnResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnResult").field("request", &self.0.req).field("outcome", &self.0.out).finish()
    }
}

/// A transaction inside the FIL, with its result as it takes shape.
pub(crate) struct Txn {
    pub req: FlashRequest,
    pub out: TxnOutcome,
    /// Where the submitter waits for the answer (see `handle.rs`).
    pub slot: u32,
    /// The host request the submitting task served (for traces).
    pub request: Option<u64>,
}

impl Txn {
    pub fn new(req: FlashRequest, slot: u32, submitted: SimTime) -> Self {
        Txn {
            req,
            out: TxnOutcome {
                status: FlashStatus::Ok,
                timing: TxnTiming { submitted, ..TxnTiming::default() },
                oob: None,
                data: None,
                parity: None,
                seq: 0,
            },
            slot,
            request: None,
        }
    }
}
