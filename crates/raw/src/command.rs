//! Raw commands and their completions.

use std::rc::Rc;

use firmware::fil::{PageWrite, TxnResult, TxnSource};
use nand::{DataTag, Lpn, Ppa};
use sim::SimTime;

/// One mapping unit written into a page buffer of the SRAM pool.
#[derive(Clone, Debug)]
pub struct Sector {
    /// The page buffer, named by the host (a new name opens a buffer).
    pub buffer: u64,
    /// The unit's slot in the page.
    pub slot: u32,
    /// Its LPN (recorded in the page's OOB).
    pub lpn: Lpn,
    /// Its data tag.
    pub tag: DataTag,
    /// The sequence number of the host write that first wrote the data (orders copies of an
    /// LPN at recovery; never 0).
    pub born: u64,
    /// Its bytes (payload stores only).
    pub data: Option<Rc<[u8]>>,
}

/// What a raw command does.
#[derive(Clone, Debug)]
pub enum RawOp {
    /// Read the pages: `bytes` of each (0 = the whole page).
    Read {
        /// Bytes transferred per page (0 = the whole page).
        bytes: u32,
        /// Copy the payload out (payload stores).
        want_data: bool,
    },
    /// Program whole pages with the data the command carries (one write per PPA; a super-page
    /// write names one page per channel).
    Program {
        /// One per PPA.
        writes: Vec<PageWrite>,
    },
    /// One unit into an SRAM page buffer. The command's single PPA names the die the buffer's
    /// page will go to (its block and page are not used): it routes the command to that die's
    /// controller.
    WriteSector(Sector),
    /// Program SRAM page buffer `buffer` into the page at the command's single PPA (empty
    /// slots padded). Pages take their place in a block when this is submitted, so a host
    /// fills buffers in any order and still programs every block in page order.
    ProgramBuffered {
        /// The buffer the sectors filled.
        buffer: u64,
    },
    /// Erase the blocks holding the PPAs.
    Erase,
}

impl RawOp {
    /// A short name (`read`, `program`, `sector`, `program-buffered`, `erase`).
    pub fn name(&self) -> &'static str {
        match self {
            RawOp::Read { .. } => "read",
            RawOp::Program { .. } => "program",
            RawOp::WriteSector(_) => "sector",
            RawOp::ProgramBuffered { .. } => "program-buffered",
            RawOp::Erase => "erase",
        }
    }
}

/// A command to the raw array: an operation at typed physical addresses, all served by one
/// controller.
#[derive(Clone, Debug)]
pub struct RawCommand {
    /// The operation.
    pub op: RawOp,
    /// Who asks (the FIL's queue priority): host data or GC.
    pub source: TxnSource,
    /// The pages (erase: any page of each block).
    pub ppas: Vec<Ppa>,
}

/// How a raw command ended. Device outcomes are values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawStatus {
    /// Done.
    Ok,
    /// The command is malformed: an address outside the array, PPAs of several controllers,
    /// too many PPAs, data that does not match. The text says which.
    Invalid(String),
    /// The page store failed.
    Store(String),
}

/// The answer to a raw command.
#[derive(Debug)]
pub struct RawCompletion {
    /// Outcome.
    pub status: RawStatus,
    /// The FIL's answer for each PPA, in order (empty for sector writes and invalid commands).
    pub results: Vec<TxnResult>,
    /// The host submitted it.
    pub submitted: SimTime,
    /// It got a command slot.
    pub slot: SimTime,
    /// Its flash work was done (for sector writes: the unit was in SRAM).
    pub flash_done: SimTime,
}
