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
    /// Zone Append (0x7D, Zoned Namespace command set): writes at the zone's write pointer
    /// (`slba` is the zone's first block) and returns the block it was written at.
    ZoneAppend,
    /// Zone Management Send (0x79): a zone action (`NvmeCommand::zone`).
    ZoneManagementSend,
    /// Zone Management Receive (0x7A): report zones (`NvmeCommand::zone`).
    ZoneManagementReceive,
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
            Opcode::ZoneAppend => "zone-append",
            Opcode::ZoneManagementSend => "zone-send",
            Opcode::ZoneManagementReceive => "zone-receive",
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
    /// A zone report (Zone Management Receive): the descriptors of the zones reported.
    Zones(Vec<ZoneDescriptor>),
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
    /// Where the host wants a write to land: a channel group or die (honoured by host-side
    /// FTLs; an SSD ignores it) or an FDP placement identifier (the Data Placement directive).
    pub placement: Option<Placement>,
    /// The zone action or report of a Zone Management Send or Receive.
    pub zone: Option<ZoneOp>,
    /// The NVM set of the submission queue the command came through (its NVMSETID; 0: none).
    /// The controller sets it when the command is submitted; whatever the host put here is
    /// replaced.
    pub nvm_set: u16,
    /// The submission queue the command came through (0: none, a command run without the
    /// controller). The controller sets it when the command is submitted; the FTL takes the
    /// queue's flow's data-cache partition from it (`Ftl::bind_flows`).
    pub sq: u16,
}

/// A Zone Management command's operation (NVMe Zoned Namespace Command Set Specification,
/// revision 1.1, sections 3.4.2 and 3.4.3).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ZoneOp {
    /// Zone Management Send: `action` on the zone starting at the command's `slba`, or on
    /// every zone in a state the action applies to (`all`, the Select All bit).
    Send {
        /// Zone Send Action.
        action: ZoneAction,
        /// Select All.
        all: bool,
    },
    /// Zone Management Receive (Report Zones): descriptors of the zones from the one holding
    /// `slba` on, those in the states `filter` selects, at most `max`; with `partial` the
    /// count returned is of the descriptors returned, otherwise of every zone that matches.
    Receive {
        /// Zone Receive Action Specific Field: which states are reported.
        filter: ZoneFilter,
        /// Partial Report.
        partial: bool,
        /// Descriptors the host's buffer holds.
        max: u32,
    },
}

/// Zone Send Actions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneAction {
    /// Close Zone (1h): an open zone becomes closed.
    Close,
    /// Finish Zone (2h): the zone becomes full.
    Finish,
    /// Open Zone (3h): the zone becomes explicitly opened.
    Open,
    /// Reset Zone (4h): the zone becomes empty, its write pointer at its start.
    Reset,
    /// Offline Zone (5h): a read-only zone becomes offline.
    Offline,
}

/// Which zones a report lists (the Reporting Options of Report Zones).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ZoneFilter {
    /// 0h: every zone.
    All,
    /// 1h..7h: the zones in that state.
    State(ZoneState),
}

/// Zone states (ZNS specification, figure "Zone State Machine"; the values are the Zone State
/// field of a zone descriptor).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneState {
    /// ZSE (1h): nothing written, not open.
    Empty,
    /// ZSIO (2h): opened by a write.
    ImplicitlyOpened,
    /// ZSEO (3h): opened by an Open Zone action.
    ExplicitlyOpened,
    /// ZSC (4h): written to, not open.
    Closed,
    /// ZSRO (Dh): readable only.
    ReadOnly,
    /// ZSF (Eh): written to its capacity, or finished.
    Full,
    /// ZSO (Fh): neither readable nor writable.
    Offline,
}

impl ZoneState {
    /// The Zone State field's value.
    pub fn code(self) -> u8 {
        match self {
            ZoneState::Empty => 0x1,
            ZoneState::ImplicitlyOpened => 0x2,
            ZoneState::ExplicitlyOpened => 0x3,
            ZoneState::Closed => 0x4,
            ZoneState::ReadOnly => 0xD,
            ZoneState::Full => 0xE,
            ZoneState::Offline => 0xF,
        }
    }

    /// Whether the zone holds an open resource (implicitly or explicitly opened).
    pub fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened)
    }

    /// Whether the zone holds an active resource (open or closed).
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

/// One zone as Report Zones describes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ZoneDescriptor {
    /// Zone Start Logical Block Address.
    pub start: u64,
    /// Zone Capacity, blocks writable from the start.
    pub capacity: u64,
    /// Write Pointer (the start plus blocks written; meaningless when full, read-only or
    /// offline, where the specification leaves it undefined and this model reports the end of
    /// capacity).
    pub wp: u64,
    /// Zone State.
    pub state: ZoneState,
}

/// A host's choice of where a write lands: a logical channel group or one die of the array.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// Any die of logical channel group `n` (least-utilised channel first).
    Group(u32),
    /// Die `n` (in the array's flat die order).
    Die(u32),
    /// Flexible Data Placement: placement identifier `n` (Write with directive type 2h, Data
    /// Placement, and DSPEC `n`), an index into the namespace's placement handles.
    Pid(u16),
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placement::Group(n) => write!(f, "group:{n}"),
            Placement::Die(n) => write!(f, "die:{n}"),
            Placement::Pid(n) => write!(f, "pid:{n}"),
        }
    }
}

impl std::str::FromStr for Placement {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}`: expected group:N, die:N or pid:N");
        let (kind, n) = s.split_once(':').ok_or_else(bad)?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        match kind.trim() {
            "group" => Ok(Placement::Group(n)),
            "die" => Ok(Placement::Die(n)),
            "pid" => Ok(Placement::Pid(u16::try_from(n).map_err(|_| bad())?)),
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
            zone: None,
            nvm_set: 0,
            sq: 0,
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

    /// A Zone Append of `nlb` blocks carrying `data` to the zone starting at `zslba`.
    pub fn zone_append(zslba: u64, nlb: u32, data: HostData) -> Self {
        NvmeCommand { data, ..NvmeCommand::of(Opcode::ZoneAppend, zslba, nlb) }
    }

    /// A Zone Management Send of `action` on the zone starting at `zslba` (every zone it
    /// applies to if `all`).
    pub fn zone_send(zslba: u64, action: ZoneAction, all: bool) -> Self {
        NvmeCommand {
            zone: Some(ZoneOp::Send { action, all }),
            ..NvmeCommand::of(Opcode::ZoneManagementSend, zslba, 0)
        }
    }

    /// A Report Zones from the zone holding `slba` on: up to `max` descriptors of the zones
    /// `filter` selects.
    pub fn report_zones(slba: u64, filter: ZoneFilter, partial: bool, max: u32) -> Self {
        NvmeCommand {
            zone: Some(ZoneOp::Receive { filter, partial, max }),
            ..NvmeCommand::of(Opcode::ZoneManagementReceive, slba, 0)
        }
    }

    /// The same command with FDP placement identifier `pid` (the Data Placement directive).
    pub fn with_pid(self, pid: u16) -> Self {
        NvmeCommand { placement: Some(Placement::Pid(pid)), ..self }
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
    /// Zone Boundary Error (B8h): the command crosses a zone's boundary.
    ZoneBoundaryError,
    /// Zone Is Full (B9h).
    ZoneIsFull,
    /// Zone Is Read Only (BAh).
    ZoneIsReadOnly,
    /// Zone Is Offline (BBh).
    ZoneIsOffline,
    /// Zone Invalid Write (BCh): a write not at the zone's write pointer.
    ZoneInvalidWrite,
    /// Too Many Active Zones (BDh).
    TooManyActiveZones,
    /// Too Many Open Zones (BEh).
    TooManyOpenZones,
    /// Invalid Zone State Transition (BFh).
    InvalidZoneStateTransition,
    /// Placement identifier beyond the namespace's placement handles (generic 02h with the
    /// FDP reason: Invalid Placement Handle).
    InvalidPlacementHandle(u16),
}

impl Status {
    /// The status's (Status Code Type, Status Code) pair as the NVMe specifications number
    /// them (generic 0h, command specific 1h, media 2h).
    pub fn code(&self) -> (u8, u8) {
        match self {
            Status::Success => (0, 0x00),
            Status::InvalidOpcode => (0, 0x01),
            Status::InvalidField(_) | Status::InvalidPlacementHandle(_) => (0, 0x02),
            Status::InternalError(_) => (0, 0x06),
            Status::WriteProtected => (0, 0x20),
            Status::LbaOutOfRange => (0, 0x80),
            Status::InvalidQueue => (1, 0x01),
            Status::UnrecoveredRead => (2, 0x81),
            Status::ZoneBoundaryError => (1, 0xB8),
            Status::ZoneIsFull => (1, 0xB9),
            Status::ZoneIsReadOnly => (1, 0xBA),
            Status::ZoneIsOffline => (1, 0xBB),
            Status::ZoneInvalidWrite => (1, 0xBC),
            Status::TooManyActiveZones => (1, 0xBD),
            Status::TooManyOpenZones => (1, 0xBE),
            Status::InvalidZoneStateTransition => (1, 0xBF),
        }
    }
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
    /// The command-specific result (Dwords 0 and 1): the block a Zone Append wrote at, the
    /// number of zones a report matched; 0 otherwise.
    pub result: u64,
}
