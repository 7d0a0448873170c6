//! NVMe commands and completions as the simulation carries them (decoded: no wire format).

use nand::DataTag;
use sim::SimTime;

use crate::trace::Phases;

/// I/O command opcodes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Opcode {
    /// Read (0x02).
    Read,
    /// Write (0x01), optionally with force unit access.
    Write,
    /// Flush (0x00).
    Flush,
    /// Dataset Management (0x09) with the deallocate attribute.
    DatasetManagement,
    /// Write Zeroes (0x08).
    WriteZeroes,
}

impl Opcode {
    /// Lower-case name (`read`, `write`, `flush`, `dsm`, `write-zeroes`).
    pub fn name(self) -> &'static str {
        match self {
            Opcode::Read => "read",
            Opcode::Write => "write",
            Opcode::Flush => "flush",
            Opcode::DatasetManagement => "dsm",
            Opcode::WriteZeroes => "write-zeroes",
        }
    }
}

/// Data moving between host memory and the device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HostData {
    /// None (metadata-only runs that do not check data, flushes, trims).
    #[default]
    None,
    /// Payload bytes, `nlb * lba_size` of them.
    Bytes(Vec<u8>),
    /// Metadata-only: one tag per mapping unit the command touches.
    Tags(Vec<DataTag>),
}

/// An I/O command.
#[derive(Clone, Debug)]
pub struct NvmeCommand {
    /// Operation.
    pub opcode: Opcode,
    /// First logical block.
    pub slba: u64,
    /// Logical blocks (a count, not the wire format's count minus one).
    pub nlb: u32,
    /// Force unit access: the write is on media before it completes.
    pub fua: bool,
    /// Dataset Management ranges: (first block, blocks).
    pub ranges: Vec<(u64, u32)>,
    /// Write data.
    pub data: HostData,
    /// Where the host wants a write to land (honoured by host-side FTLs; an SSD ignores it).
    pub placement: Option<Placement>,
}

/// A host's choice of where a write lands: a logical channel group or one die of the array.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// Any die of logical channel group `n` (least-utilised channel first).
    Group(u32),
    /// Die `n` (in the array's flat die order).
    Die(u32),
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placement::Group(n) => write!(f, "group:{n}"),
            Placement::Die(n) => write!(f, "die:{n}"),
        }
    }
}

impl std::str::FromStr for Placement {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}`: expected group:N or die:N");
        let (kind, n) = s.split_once(':').ok_or_else(bad)?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        match kind.trim() {
            "group" => Ok(Placement::Group(n)),
            "die" => Ok(Placement::Die(n)),
            _ => Err(bad()),
        }
    }
}

impl NvmeCommand {
    /// A command of `opcode` on `nlb` blocks at `slba`, without data, ranges, FUA or placement.
    fn of(opcode: Opcode, slba: u64, nlb: u32) -> Self {
        NvmeCommand {
            opcode,
            slba,
            nlb,
            fua: false,
            ranges: Vec::new(),
            data: HostData::None,
            placement: None,
        }
    }

    /// A read of `nlb` blocks at `slba`.
    pub fn read(slba: u64, nlb: u32) -> Self {
        NvmeCommand::of(Opcode::Read, slba, nlb)
    }

    /// A write of `nlb` blocks at `slba` carrying `data`.
    pub fn write(slba: u64, nlb: u32, data: HostData) -> Self {
        NvmeCommand { data, ..NvmeCommand::of(Opcode::Write, slba, nlb) }
    }

    /// A flush.
    pub fn flush() -> Self {
        NvmeCommand::of(Opcode::Flush, 0, 0)
    }

    /// A deallocate of `ranges`.
    pub fn deallocate(ranges: Vec<(u64, u32)>) -> Self {
        NvmeCommand { ranges, ..NvmeCommand::of(Opcode::DatasetManagement, 0, 0) }
    }

    /// A write-zeroes of `nlb` blocks at `slba`.
    pub fn write_zeroes(slba: u64, nlb: u32) -> Self {
        NvmeCommand::of(Opcode::WriteZeroes, slba, nlb)
    }
}

/// Completion status.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Status {
    /// Success.
    Success,
    /// Invalid opcode for this queue.
    InvalidOpcode,
    /// A field is invalid (zero length, beyond the maximum transfer, data of the wrong size).
    InvalidField(String),
    /// The range goes past the namespace.
    LbaOutOfRange,
    /// Media error: unrecovered read.
    UnrecoveredRead,
    /// The device failed internally (its NAND image could not be written).
    InternalError(String),
    /// The media is read-only (its spare blocks ran out): a write, trim or write-zeroes was
    /// refused (NVMe generic status 20h, Namespace Is Write Protected).
    WriteProtected,
    /// The queue does not exist.
    InvalidQueue,
}

/// When things happened to one command.
#[derive(Copy, Clone, Debug, Default)]
pub struct CommandTiming {
    /// The controller's number for the command (submission order; traces name requests by
    /// it).
    pub id: u64,
    /// The host queued the command.
    pub submitted: SimTime,
    /// The host received the completion.
    pub completed: SimTime,
}

/// The completion of a command.
#[derive(Clone, Debug)]
pub struct NvmeCompletion {
    /// Status.
    pub status: Status,
    /// Read data (same form as the host asked for: bytes in payload mode, tags otherwise).
    pub data: HostData,
    /// Timing.
    pub timing: CommandTiming,
    /// Where the time went.
    pub phases: Phases,
}
