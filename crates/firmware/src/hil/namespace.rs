//! The namespace a front exposes and how an I/O command maps onto its mapping units, for every
//! front alike (an SSD's NVMe controller, a bridge, a host-side FTL's block driver): the checks
//! made before any work, the split of a command's blocks into per-unit parts, the read data
//! assembled from the units read, and the unit writes made from a command's data.

use nand::{DataTag, Lpn};

use crate::ftl::{MediaError, UnitData, UnitWrite};
use crate::hil::config::HostInterfaceConfig;
use crate::hil::nvme::{HostData, NvmeCommand, Opcode, Placement, Status};

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

/// The completion status of a unit that could not be read or written.
pub(crate) fn media_status(e: &MediaError) -> Status {
    match e {
        MediaError::Uncorrectable => Status::UnrecoveredRead,
        MediaError::Store(s) => Status::InternalError(s.clone()),
    }
}

/// What a front exposes to the host: one namespace of fixed-size logical blocks over mapping
/// units, taking transfers up to a maximum size.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// Size in logical blocks.
    pub capacity_lbas: u64,
    /// Logical block size, bytes.
    pub lba_bytes: u32,
    /// Mapping unit size, bytes (a whole number of logical blocks; the granularity of trims).
    pub unit_bytes: u32,
    /// Largest data transfer of one command, bytes.
    pub max_transfer: u64,
    /// Whether data moves as bytes (payload stores) rather than tags.
    pub payload: bool,
}

impl Namespace {
    /// The namespace a host interface configured as `host` exposes over `units` mapping units
    /// of `unit_bytes`, moving bytes if `payload`.
    pub fn new(host: &HostInterfaceConfig, units: u32, unit_bytes: u32, payload: bool) -> Namespace {
        let lba_bytes = host.lba_size.bytes() as u32;
        Namespace {
            capacity_lbas: units as u64 * (unit_bytes / lba_bytes) as u64,
            lba_bytes,
            unit_bytes,
            max_transfer: host.max_transfer.bytes(),
            payload,
        }
    }

    /// Logical blocks per mapping unit.
    pub fn spu(&self) -> u32 {
        self.unit_bytes / self.lba_bytes
    }

    /// Bytes of `nlb` logical blocks.
    pub fn bytes(&self, nlb: u32) -> u64 {
        nlb as u64 * self.lba_bytes as u64
    }

    /// The mapping-unit sub-requests of `nlb` blocks at `slba`.
    pub fn split(&self, slba: u64, nlb: u32) -> Parts {
        split(slba, nlb, self.spu())
    }

    /// Checks a host command before any work: the status a front answers a malformed command
    /// with (a range outside the namespace, a zero-length or oversized transfer, write data
    /// that does not match the transfer).
    pub fn check(&self, cmd: &NvmeCommand) -> Result<(), Status> {
        let in_range =
            |slba: u64, nlb: u32| slba.checked_add(nlb as u64).is_some_and(|e| e <= self.capacity_lbas);
        match cmd.opcode {
            Opcode::Flush | Opcode::ZoneManagementSend | Opcode::ZoneManagementReceive => Ok(()),
            Opcode::DatasetManagement => {
                if cmd.ranges.is_empty() || cmd.ranges.len() > 256 {
                    return Err(Status::InvalidField(format!(
                        "{} ranges (1 to 256 allowed)",
                        cmd.ranges.len()
                    )));
                }
                match cmd.ranges.iter().all(|&(s, n)| in_range(s, n)) {
                    true => Ok(()),
                    false => Err(Status::LbaOutOfRange),
                }
            }
            Opcode::Read | Opcode::Write | Opcode::WriteZeroes | Opcode::ZoneAppend => {
                if cmd.nlb == 0 {
                    return Err(Status::InvalidField("zero-length transfer".into()));
                }
                let bytes = self.bytes(cmd.nlb);
                if cmd.opcode != Opcode::WriteZeroes && bytes > self.max_transfer {
                    return Err(Status::InvalidField(format!(
                        "{bytes} bytes exceed the maximum transfer size"
                    )));
                }
                if !in_range(cmd.slba, cmd.nlb) {
                    return Err(Status::LbaOutOfRange);
                }
                let data_fits = match (&cmd.data, cmd.opcode) {
                    (_, Opcode::Read | Opcode::WriteZeroes) => true,
                    (HostData::Bytes(b), _) => b.len() as u64 == bytes,
                    (HostData::Tags(t), _) => !self.payload && t.len() == self.split(cmd.slba, cmd.nlb).len(),
                    (HostData::None, _) => !self.payload,
                    (HostData::Zones(_), _) => false,
                };
                match data_fits {
                    true => Ok(()),
                    false => {
                        Err(Status::InvalidField("write data does not match the transfer length".into()))
                    }
                }
            }
        }
    }

    /// The host's read data from the units read for `parts` (in order): the sectors the
    /// command covers of each unit, or one tag per unit. The first unit that could not be
    /// read makes the command's status instead.
    pub fn read_data(
        &self,
        parts: &[Part],
        units: &[Result<UnitData, MediaError>],
    ) -> Result<HostData, Status> {
        if let Some(Err(e)) = units.iter().find(|u| u.is_err()) {
            return Err(media_status(e));
        }
        if !self.payload {
            return Ok(HostData::Tags(
                units.iter().map(|u| u.as_ref().map_or(DataTag(0), UnitData::tag)).collect(),
            ));
        }
        let lba = self.lba_bytes as usize;
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.sectors as usize).sum::<usize>() * lba);
        for (p, u) in parts.iter().zip(units) {
            let Ok(UnitData::Bytes(b)) = u else { unreachable!("payload reads carry bytes") };
            out.extend_from_slice(&b[p.first as usize * lba..(p.first + p.sectors) as usize * lba]);
        }
        Ok(HostData::Bytes(out))
    }

    /// The unit writes of a Write (every unit it covers, with the command's data: its bytes
    /// in order, or a unit's tag) or a Write Zeroes (zeroes into the units it covers in part;
    /// those it covers whole are trimmed, see [`trimmed_units`](Self::trimmed_units)). Other
    /// commands write nothing.
    pub fn unit_writes<'a>(&self, cmd: &'a NvmeCommand) -> impl Iterator<Item = UnitWrite> + 'a {
        let (spu, lba, payload) = (self.spu(), self.lba_bytes as usize, self.payload);
        let mut offset = 0;
        let parts = match cmd.opcode {
            Opcode::Write | Opcode::WriteZeroes => self.split(cmd.slba, cmd.nlb),
            _ => Parts::new(),
        };
        parts
            .into_iter()
            .enumerate()
            .filter(move |(_, p)| cmd.opcode == Opcode::Write || p.sectors < spu)
            .map(move |(i, p)| {
                let n = p.sectors as usize * lba;
                let data = match (&cmd.data, cmd.opcode) {
                    (_, Opcode::WriteZeroes) if payload => {
                        UnitData::Bytes(std::iter::repeat_n(0, n).collect())
                    }
                    (_, Opcode::WriteZeroes) => UnitData::Tag(DataTag(0)),
                    (HostData::Bytes(b), _) => {
                        offset += n;
                        UnitData::Bytes(b[offset - n..offset].into())
                    }
                    (HostData::Tags(t), _) => UnitData::Tag(t.get(i).copied().unwrap_or_default()),
                    (HostData::None | HostData::Zones(_), _) => UnitData::Tag(DataTag(0)),
                };
                let pid = match cmd.placement {
                    Some(Placement::Pid(n)) if cmd.opcode == Opcode::Write => Some(n),
                    _ => None,
                };
                let set = cmd.nvm_set as u8; // the controller admits sets below 256 only
                let sq = cmd.sq;
                UnitWrite { lpn: p.lpn, first_sector: p.first, sectors: p.sectors, data, pid, set, sq }
            })
    }

    /// The units a Dataset Management (deallocate) or a Write Zeroes command trims: those it
    /// covers whole, in order. Other commands trim nothing.
    pub fn trimmed_units(&self, cmd: &NvmeCommand) -> Vec<Lpn> {
        let spu = self.spu();
        let ranges = match cmd.opcode {
            Opcode::DatasetManagement => &cmd.ranges[..],
            Opcode::WriteZeroes => &[(cmd.slba, cmd.nlb)][..],
            _ => &[],
        };
        ranges
            .iter()
            .flat_map(|&(s, n)| split(s, n, spu))
            .filter(|p| p.sectors == spu)
            .map(|p| p.lpn)
            .collect()
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

    fn ns(payload: bool) -> Namespace {
        Namespace { capacity_lbas: 64, lba_bytes: 2, unit_bytes: 8, max_transfer: 64, payload }
    }

    #[test]
    fn writes_take_the_data_in_order_and_write_zeroes_trim_whole_units() {
        // 4 blocks per unit; blocks 3..9 cover units 0 (1 block), 1 (4), 2 (1).
        let data: Vec<u8> = (0..12).collect();
        let w = NvmeCommand::write(3, 6, HostData::Bytes(data));
        let writes: Vec<UnitWrite> = ns(true).unit_writes(&w).collect();
        let spans: Vec<(u32, u32, u32)> =
            writes.iter().map(|u| (u.lpn.0, u.first_sector, u.sectors)).collect();
        assert_eq!(spans, [(0, 3, 1), (1, 0, 4), (2, 0, 1)]);
        assert!(matches!(&writes[1].data, UnitData::Bytes(b) if b[..] == [2, 3, 4, 5, 6, 7, 8, 9]));
        let z = NvmeCommand::write_zeroes(3, 6);
        let zeroed: Vec<u32> = ns(false).unit_writes(&z).map(|u| u.lpn.0).collect();
        assert_eq!((zeroed, ns(false).trimmed_units(&z)), (vec![0, 2], vec![Lpn(1)]));
        assert_eq!(ns(false).check(&NvmeCommand::write(3, 6, HostData::Tags(vec![DataTag(1)]))), {
            Err(Status::InvalidField("write data does not match the transfer length".into()))
        });
        assert_eq!(ns(false).check(&NvmeCommand::read(62, 4)), Err(Status::LbaOutOfRange));
    }

    #[test]
    fn read_data_gathers_the_covered_sectors_or_reports_the_first_failed_unit() {
        let parts = split(3, 2, 4); // block 3 of unit 0, block 0 of unit 1
        let units = [Ok(UnitData::Bytes((0..8).collect())), Ok(UnitData::Bytes((10..18).collect()))];
        assert_eq!(ns(true).read_data(&parts, &units), Ok(HostData::Bytes(vec![6, 7, 10, 11])));
        let failed = [Ok(UnitData::Tag(DataTag(1))), Err(MediaError::Uncorrectable)];
        assert_eq!(ns(false).read_data(&parts, &failed), Err(Status::UnrecoveredRead));
    }
}
