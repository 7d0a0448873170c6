//! Log headers: one 64-byte, checksummed header per logged operation.
//!
//! A front end appends an operation in three steps: (1) its payload into the circular data
//! region, (2) this header into the next header slot, (3) one atomic store of the log tail.
//! The header names its payload by a monotonic byte position (`data_pos`), length and CRC, so
//! the back end's Log Fetch stage reads headers only and fetches payloads later, on demand.

use crate::codec::{check_crc, crc32, get_u16, get_u32, get_u64, need, put_u16, put_u32, put_u64};
use crate::{Geometry, Ino, Inode, LayoutError, NAME_MAX};

/// Blocks a new directory entry can allocate: one directory block and, at worst, two index
/// blocks (double-indirect and second level) to point at it. Create, link and rename reserve
/// this many (create one more for a symbolic link's target block).
pub const DIR_ENTRY_BLOCKS: u64 = 3;

/// Size of a log header in bytes (one cache line).
pub const LOG_HEADER_SIZE: usize = 64;
const CRC_AT: usize = 60;
const WHAT: &str = "log header";

/// Which attributes a `SetAttr` operation changes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SetAttrMask(pub u8);

impl SetAttrMask {
    /// Change the permission bits.
    pub const MODE: u8 = 1;
    /// Change the owner.
    pub const UID: u8 = 2;
    /// Change the group.
    pub const GID: u8 = 4;
    /// Change the access time (payload bytes 0..8).
    pub const ATIME: u8 = 8;
    /// Change the modification time (payload bytes 8..16).
    pub const MTIME: u8 = 16;

    /// Whether `bit` is set.
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// A logged operation. Payloads (names, data) live in the log data region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogOp {
    /// Write the payload at `offset` of `ino`.
    Write {
        /// The file.
        ino: Ino,
        /// Byte offset.
        offset: u64,
        /// Data blocks the writer reserved for applying it (at most
        /// [`Inode::worst_case_blocks`]); the back end releases them once it is applied.
        reserve: u32,
    },
    /// Set the size of `ino` (shrinking frees blocks, growing reads as zeroes).
    Truncate {
        /// The file.
        ino: Ino,
        /// New size.
        size: u64,
    },
    /// Create `ino` named by the first `name_len` payload bytes in `parent`; any further
    /// payload bytes are a symbolic link's target.
    Create {
        /// Directory to insert into.
        parent: Ino,
        /// The new inode (granted to the front end by the back end).
        ino: Ino,
        /// Type and permissions.
        mode: u32,
        /// Owner.
        uid: u32,
        /// Group.
        gid: u32,
        /// Device number.
        rdev: u32,
        /// Length of the name within the payload.
        name_len: u16,
    },
    /// Add a hard link to `ino` named by the payload in `parent`.
    Link {
        /// Directory to insert into.
        parent: Ino,
        /// Existing inode.
        ino: Ino,
    },
    /// Remove the entry named by the payload from `parent` (file or empty directory).
    Unlink {
        /// Directory to remove from.
        parent: Ino,
        /// The inode the entry points to.
        ino: Ino,
    },
    /// Move the entry named by the first `src_len` payload bytes from `src_parent` to the
    /// name given by the rest in `dst_parent`, replacing `replaced` if non-zero.
    Rename {
        /// Source directory.
        src_parent: Ino,
        /// Destination directory.
        dst_parent: Ino,
        /// The moved inode.
        ino: Ino,
        /// The inode the destination name pointed to (0 = none).
        replaced: Ino,
        /// Length of the source name within the payload.
        src_len: u16,
    },
    /// Change attributes; the payload holds atime and mtime (8 bytes each, ns).
    SetAttr {
        /// The inode.
        ino: Ino,
        /// Which fields change.
        mask: SetAttrMask,
        /// New permission bits.
        mode: u32,
        /// New owner.
        uid: u32,
        /// New group.
        gid: u32,
    },
}

/// A decoded log header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogHeader {
    /// Sequence number; the header lives in slot `seq % headers`.
    pub seq: u64,
    /// Monotonic byte position of the payload in the data region.
    pub data_pos: u64,
    /// Payload length.
    pub data_len: u32,
    /// CRC32 of the payload.
    pub data_crc: u32,
    /// Time of the operation (ns since the epoch); becomes ctime/mtime.
    pub time_ns: i64,
    /// The operation.
    pub op: LogOp,
}

impl LogOp {
    /// The inode whose data or attributes the operation changes first.
    pub fn ino(&self) -> Ino {
        match *self {
            LogOp::Write { ino, .. }
            | LogOp::Truncate { ino, .. }
            | LogOp::Create { ino, .. }
            | LogOp::Link { ino, .. }
            | LogOp::Unlink { ino, .. }
            | LogOp::Rename { ino, .. }
            | LogOp::SetAttr { ino, .. } => ino,
        }
    }

    /// Data blocks reserved for applying this operation, whose payload is `data_len` bytes:
    /// a write's own reservation, a fixed bound for operations that add a directory entry,
    /// nothing for the rest (they allocate nothing).
    pub fn reserved_blocks(&self, data_len: u32) -> u64 {
        match *self {
            LogOp::Write { reserve, .. } => reserve as u64,
            LogOp::Create { name_len, .. } => DIR_ENTRY_BLOCKS + u64::from(data_len > name_len as u32),
            LogOp::Link { .. } | LogOp::Rename { .. } => DIR_ENTRY_BLOCKS,
            LogOp::Truncate { .. } | LogOp::Unlink { .. } | LogOp::SetAttr { .. } => 0,
        }
    }

    /// Whether the operation changes the namespace (directories).
    pub fn is_namespace(&self) -> bool {
        matches!(
            self,
            LogOp::Create { .. } | LogOp::Link { .. } | LogOp::Unlink { .. } | LogOp::Rename { .. }
        )
    }
}

impl LogHeader {
    /// Encodes the header with its CRC32.
    pub fn encode(&self) -> [u8; LOG_HEADER_SIZE] {
        let mut b = [0u8; LOG_HEADER_SIZE];
        put_u64(&mut b, 0, self.seq);
        put_u64(&mut b, 8, self.data_pos);
        put_u32(&mut b, 16, self.data_len);
        put_u32(&mut b, 20, self.data_crc);
        put_u64(&mut b, 48, self.time_ns as u64);
        let (code, ino, ino2, a, bb, aux) = match self.op {
            LogOp::Write { ino, offset, reserve } => (1, ino, Ino(0), offset, reserve as u64, 0),
            LogOp::Truncate { ino, size } => (2, ino, Ino(0), size, 0, 0),
            LogOp::Create { parent, ino, mode, uid, gid, rdev, name_len } => {
                (3, ino, parent, mode as u64 | (uid as u64) << 32, gid as u64 | (rdev as u64) << 32, name_len)
            }
            LogOp::Link { parent, ino } => (4, ino, parent, 0, 0, 0),
            LogOp::Unlink { parent, ino } => (5, ino, parent, 0, 0, 0),
            LogOp::Rename { src_parent, dst_parent, ino, replaced, src_len } => {
                (6, ino, src_parent, dst_parent.0 as u64, replaced.0 as u64, src_len)
            }
            LogOp::SetAttr { ino, mask, mode, uid, gid } => {
                (7, ino, Ino(0), mask.0 as u64 | (mode as u64) << 32, uid as u64 | (gid as u64) << 32, 0)
            }
        };
        put_u32(&mut b, 24, ino.0);
        put_u32(&mut b, 28, ino2.0);
        put_u64(&mut b, 32, a);
        put_u64(&mut b, 40, bb);
        b[56] = code;
        put_u16(&mut b, 58, aux);
        let crc = crc32(&b[..CRC_AT]);
        put_u32(&mut b, CRC_AT, crc);
        b
    }

    /// Decodes and checks a header: checksum, operation code and payload shape.
    pub fn decode(b: &[u8]) -> Result<LogHeader, LayoutError> {
        need(WHAT, b, LOG_HEADER_SIZE)?;
        check_crc(WHAT, b, CRC_AT)?;
        let ino = Ino(get_u32(b, 24));
        let ino2 = Ino(get_u32(b, 28));
        let a = get_u64(b, 32);
        let bb = get_u64(b, 40);
        let aux = get_u16(b, 58);
        let data_len = get_u32(b, 16);
        let range = |field, value| LayoutError::OutOfRange { what: WHAT, field, value };
        let name_ok = |len: usize| (1..=NAME_MAX).contains(&len);
        let op = match b[56] {
            1 => {
                if bb > u32::MAX as u64 {
                    return Err(range("reserve", bb));
                }
                LogOp::Write { ino, offset: a, reserve: bb as u32 }
            }
            2 => LogOp::Truncate { ino, size: a },
            3 => {
                if !name_ok(aux as usize) || aux as u32 > data_len {
                    return Err(range("name_len", aux as u64));
                }
                LogOp::Create {
                    parent: ino2,
                    ino,
                    mode: a as u32,
                    uid: (a >> 32) as u32,
                    gid: bb as u32,
                    rdev: (bb >> 32) as u32,
                    name_len: aux,
                }
            }
            4 | 5 => {
                if !name_ok(data_len as usize) {
                    return Err(range("data_len", data_len as u64));
                }
                if b[56] == 4 {
                    LogOp::Link { parent: ino2, ino }
                } else {
                    LogOp::Unlink { parent: ino2, ino }
                }
            }
            6 => {
                let dst_len = (data_len as usize).saturating_sub(aux as usize);
                if !name_ok(aux as usize) || !name_ok(dst_len) || aux as u32 > data_len {
                    return Err(range("src_len", aux as u64));
                }
                if a > u32::MAX as u64 || bb > u32::MAX as u64 {
                    return Err(range("dst_parent", a));
                }
                LogOp::Rename {
                    src_parent: ino2,
                    dst_parent: Ino(a as u32),
                    ino,
                    replaced: Ino(bb as u32),
                    src_len: aux,
                }
            }
            7 => {
                if data_len != 16 {
                    return Err(range("data_len", data_len as u64));
                }
                LogOp::SetAttr {
                    ino,
                    mask: SetAttrMask(a as u8),
                    mode: (a >> 32) as u32,
                    uid: bb as u32,
                    gid: (bb >> 32) as u32,
                }
            }
            other => return Err(range("op", other as u64)),
        };
        Ok(LogHeader {
            seq: get_u64(b, 0),
            data_pos: get_u64(b, 8),
            data_len,
            data_crc: get_u32(b, 20),
            time_ns: get_u64(b, 48) as i64,
            op,
        })
    }

    /// Checks the header against the file system's geometry: inode numbers in range and a
    /// payload no larger than half the data region (the front end never writes larger).
    pub fn validate(&self, geo: &Geometry) -> Result<(), LayoutError> {
        let range = |field, value| Err(LayoutError::OutOfRange { what: WHAT, field, value });
        let max_data = geo.log_data_blocks as u64 * crate::BLOCK_SIZE / 2;
        if self.data_len as u64 > max_data {
            return range("data_len", self.data_len as u64);
        }
        let inos: &[Ino] = match &self.op {
            LogOp::Write { ino, .. } | LogOp::Truncate { ino, .. } | LogOp::SetAttr { ino, .. } => &[*ino],
            LogOp::Create { parent, ino, .. }
            | LogOp::Link { parent, ino }
            | LogOp::Unlink { parent, ino } => &[*parent, *ino],
            LogOp::Rename { src_parent, dst_parent, ino, .. } => &[*src_parent, *dst_parent, *ino],
        };
        for ino in inos {
            if !geo.is_valid_ino(*ino) {
                return range("ino", ino.0 as u64);
            }
        }
        if let LogOp::Rename { replaced, .. } = self.op
            && !replaced.is_none()
            && !geo.is_valid_ino(replaced)
        {
            return range("replaced", replaced.0 as u64);
        }
        if let LogOp::Write { offset, .. } | LogOp::Truncate { size: offset, .. } = self.op
            && offset.saturating_add(self.data_len as u64) > crate::Inode::max_size()
        {
            return range("offset", offset);
        }
        if let LogOp::Write { offset, reserve, .. } = self.op
            && reserve as u64 > Inode::worst_case_blocks(offset, self.data_len as u64)
        {
            return range("reserve", reserve as u64);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_op() -> impl Strategy<Value = (LogOp, u32)> {
        prop_oneof![
            (1u32..1000, any::<u64>(), 0u32..100_000, any::<u32>())
                .prop_map(|(i, o, l, r)| (LogOp::Write { ino: Ino(i), offset: o, reserve: r }, l)),
            (1u32..1000, any::<u64>()).prop_map(|(i, s)| (LogOp::Truncate { ino: Ino(i), size: s }, 0)),
            (1u32..1000, 1u32..1000, any::<u32>(), 1u16..256, 0u32..300).prop_map(|(p, i, m, n, t)| (
                LogOp::Create { parent: Ino(p), ino: Ino(i), mode: m, uid: 5, gid: 6, rdev: 0, name_len: n },
                n as u32 + t
            )),
            (1u32..1000, 1u32..1000, 1u32..256)
                .prop_map(|(p, i, n)| (LogOp::Unlink { parent: Ino(p), ino: Ino(i) }, n)),
            (1u32..1000, 1u32..1000, 1u16..256, 1u32..256).prop_map(|(p, i, s, d)| (
                LogOp::Rename {
                    src_parent: Ino(p),
                    dst_parent: Ino(i),
                    ino: Ino(i),
                    replaced: Ino(0),
                    src_len: s
                },
                s as u32 + d
            )),
            (1u32..1000, any::<u8>()).prop_map(|(i, m)| (
                LogOp::SetAttr { ino: Ino(i), mask: SetAttrMask(m), mode: 0o644, uid: 1, gid: 2 },
                16
            )),
        ]
    }

    proptest! {
        #[test]
        fn round_trip((op, len) in arb_op(), seq: u64, pos: u64, crc: u32, t: i64) {
            let h = LogHeader { seq, data_pos: pos, data_len: len, data_crc: crc, time_ns: t, op };
            prop_assert_eq!(LogHeader::decode(&h.encode()).unwrap(), h);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = LogHeader::decode(&bytes);
        }

        #[test]
        fn any_bit_flip_is_detected(bit in 0usize..512) {
            let h = LogHeader { seq: 9, data_pos: 100, data_len: 5, data_crc: 1, time_ns: 3,
                op: LogOp::Write { ino: Ino(4), offset: 4096, reserve: 1 } };
            let mut b = h.encode();
            b[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(LogHeader::decode(&b).is_err());
        }
    }

    #[test]
    fn validate_rejects_out_of_range_inodes() {
        let geo = Geometry::compute(&crate::FormatConfig::small(4 << 20)).unwrap();
        let h = LogHeader {
            seq: 0,
            data_pos: 0,
            data_len: 1,
            data_crc: 0,
            time_ns: 0,
            op: LogOp::Write { ino: Ino(geo.inode_count), offset: 0, reserve: 0 },
        };
        assert!(h.validate(&geo).is_err());
        let over = LogHeader { op: LogOp::Write { ino: Ino(3), offset: 0, reserve: 2 }, ..h };
        assert!(over.validate(&geo).is_err(), "1 byte never needs 2 blocks");
    }

    #[test]
    fn worst_case_blocks_counts_index_blocks_by_zone() {
        let b = crate::BLOCK_SIZE;
        assert_eq!(Inode::worst_case_blocks(0, 0), 0);
        assert_eq!(Inode::worst_case_blocks(100, 10), 1);
        assert_eq!(Inode::worst_case_blocks(b - 1, 2), 2, "straddles two direct blocks");
        assert_eq!(
            Inode::worst_case_blocks(9 * b, 2 * b),
            3,
            "a direct and an indirect block + the indirect"
        );
        // File block 1034 is the first double-indirect one: block + double-indirect + mid.
        assert_eq!(Inode::worst_case_blocks(1034 * b, 1), 3);
        // 1033..=2058 spans the indirect zone's end and two second-level blocks.
        assert_eq!(Inode::worst_case_blocks(1033 * b, 1026 * b), 1026 + 1 + 1 + 2);
    }
}
