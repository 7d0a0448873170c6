//! RAID-0 striping: which SSD holds which part of a host range, and moving a command's data
//! between the host's order and the SSDs'.

use firmware::hil::{HostData, split};
use nand::DataTag;

/// One SSD's share of a host range: one contiguous range of the SSD's blocks, made of
/// stripe-unit chunks of the host range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// The SSD.
    pub drive: u32,
    /// Its first block on the SSD.
    pub first: u64,
    /// Blocks.
    pub nlb: u32,
    /// The chunks, in host order: (offset from the host range's start, blocks, mapping units).
    pub chunks: Vec<(u64, u32, usize)>,
}

/// The layout: `stripe` blocks per stripe unit over `drives` SSDs; `spu` blocks per mapping
/// unit (for per-unit tags).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Layout {
    pub stripe: u64,
    pub drives: u32,
    pub spu: u32,
}

impl Layout {
    /// The SSD and SSD block of host block `lba`.
    fn locate(&self, lba: u64) -> (u32, u64) {
        let unit = lba / self.stripe;
        let drive = (unit % self.drives as u64) as u32;
        (drive, unit / self.drives as u64 * self.stripe + lba % self.stripe)
    }

    /// The pieces of `nlb` blocks at `slba`, by first appearance.
    pub fn pieces(&self, slba: u64, nlb: u32) -> Vec<Piece> {
        let mut out: Vec<Piece> = Vec::new();
        let (mut off, end) = (0u64, nlb as u64);
        while off < end {
            let lba = slba + off;
            let n = (self.stripe - lba % self.stripe).min(end - off) as u32;
            let (drive, dlba) = self.locate(lba);
            let units = split(lba, n, self.spu).len();
            match out.iter_mut().find(|p| p.drive == drive) {
                Some(p) => {
                    debug_assert_eq!(p.first + p.nlb as u64, dlba, "a drive's share is contiguous");
                    p.nlb += n;
                    p.chunks.push((off, n, units));
                }
                None => out.push(Piece { drive, first: dlba, nlb: n, chunks: vec![(off, n, units)] }),
            }
            off += n as u64;
        }
        out
    }

    /// The host data for `piece` of a command carrying `data` (`lba` bytes per block).
    pub fn gather(&self, data: &HostData, pieces: &[Piece], piece: usize, lba: usize) -> HostData {
        let p = &pieces[piece];
        match data {
            HostData::None | HostData::Zones(_) => HostData::None,
            HostData::Bytes(b) => HostData::Bytes(
                p.chunks
                    .iter()
                    .flat_map(|&(off, n, _)| {
                        b[off as usize * lba..(off as usize + n as usize) * lba].iter().copied()
                    })
                    .collect(),
            ),
            HostData::Tags(t) => {
                let starts = unit_starts(pieces);
                HostData::Tags(
                    p.chunks
                        .iter()
                        .flat_map(|&(off, _, units)| t[starts[&off]..starts[&off] + units].iter().copied())
                        .collect(),
                )
            }
        }
    }

    /// The host's read data of `nlb` blocks from the pieces' answers (in piece order).
    pub fn scatter(&self, pieces: &[Piece], answers: Vec<HostData>, nlb: u32, lba: usize) -> HostData {
        match answers.first() {
            Some(HostData::Bytes(_)) => {
                let mut out = vec![0u8; nlb as usize * lba];
                for (p, a) in pieces.iter().zip(answers) {
                    let HostData::Bytes(b) = a else { continue };
                    let mut at = 0;
                    for &(off, n, _) in &p.chunks {
                        let len = n as usize * lba;
                        out[off as usize * lba..off as usize * lba + len].copy_from_slice(&b[at..at + len]);
                        at += len;
                    }
                }
                HostData::Bytes(out)
            }
            Some(HostData::Tags(_)) => {
                let starts = unit_starts(pieces);
                let total: usize = pieces.iter().flat_map(|p| &p.chunks).map(|c| c.2).sum();
                let mut out = vec![DataTag(0); total];
                for (p, a) in pieces.iter().zip(answers) {
                    let HostData::Tags(t) = a else { continue };
                    let mut at = 0;
                    for &(off, _, units) in &p.chunks {
                        out[starts[&off]..starts[&off] + units].copy_from_slice(&t[at..at + units]);
                        at += units;
                    }
                }
                HostData::Tags(out)
            }
            _ => HostData::None,
        }
    }
}

/// For each chunk (by its host offset), the index of its first unit in the host's tag list.
fn unit_starts(pieces: &[Piece]) -> std::collections::BTreeMap<u64, usize> {
    let mut chunks: Vec<(u64, usize)> =
        pieces.iter().flat_map(|p| p.chunks.iter().map(|c| (c.0, c.2))).collect();
    chunks.sort_unstable();
    let mut at = 0;
    chunks
        .into_iter()
        .map(|(off, units)| {
            let start = at;
            at += units;
            (off, start)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_splits_into_contiguous_pieces_and_data_round_trips() {
        // 4 blocks per stripe unit, 3 drives, 2 blocks per mapping unit.
        let l = Layout { stripe: 4, drives: 3, spu: 2 };
        let p = l.pieces(6, 14); // host blocks 6..20: units 1 (6,7), 2, 3, 4 (16..19), ...
        let drives: Vec<(u32, u64, u32)> = p.iter().map(|p| (p.drive, p.first, p.nlb)).collect();
        // stripe units 1 (drive 1), 2 (drive 2), 3 (drive 0), 4 (drive 1).
        assert_eq!(drives, vec![(1, 2, 6), (2, 0, 4), (0, 4, 4)]);
        let data: Vec<u8> = (0..14u8).collect();
        let pieces: Vec<HostData> =
            (0..p.len()).map(|i| l.gather(&HostData::Bytes(data.clone()), &p, i, 1)).collect();
        assert_eq!(pieces[0], HostData::Bytes(vec![0, 1, 10, 11, 12, 13]));
        assert_eq!(l.scatter(&p, pieces, 14, 1), HostData::Bytes(data));
        let tags = HostData::Tags((0..7).map(DataTag).collect());
        let pieces: Vec<HostData> = (0..p.len()).map(|i| l.gather(&tags, &p, i, 1)).collect();
        assert_eq!(pieces[0], HostData::Tags(vec![DataTag(0), DataTag(5), DataTag(6)]));
        assert_eq!(l.scatter(&p, pieces, 14, 1), tags);
    }
}
