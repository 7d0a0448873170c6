//! Inodes: 128 bytes each in the inode table.

use crate::codec::{check_crc, crc32, get_u32, get_u64, need, put_u32, put_u64};
use crate::{BLOCK_SIZE, BlockNo, Ino, LayoutError};

/// Size of an on-PM inode in bytes.
pub const INODE_SIZE: usize = 128;
/// Direct block pointers per inode.
pub const DIRECT_BLOCKS: usize = 10;
/// Block pointers per index block (4-byte pointers).
pub const PTRS_PER_BLOCK: u64 = BLOCK_SIZE / 4;
const CRC_AT: usize = 124;

/// An inode as stored in the inode table. `mode` carries the POSIX file type and permission
/// bits (`S_IFMT | 07777`); times are nanoseconds since the Unix epoch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inode {
    /// File type and permissions.
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Hard-link count (0 = free inode).
    pub nlink: u32,
    /// Size in bytes.
    pub size: u64,
    /// Access time (ns).
    pub atime: i64,
    /// Modification time (ns).
    pub mtime: i64,
    /// Status-change time (ns).
    pub ctime: i64,
    /// Direct block pointers (0 = hole).
    pub direct: [BlockNo; DIRECT_BLOCKS],
    /// Single-indirect index block.
    pub indirect: BlockNo,
    /// Double-indirect index block.
    pub dindirect: BlockNo,
    /// Parent directory (directories only; used for `..`).
    pub parent: Ino,
    /// Device number for character/block special files.
    pub rdev: u32,
    /// Generation, bumped on each reuse of the inode number.
    pub generation: u32,
}

/// `S_IFMT` mask and type bits, as in POSIX.
pub mod mode {
    /// File-type mask.
    pub const S_IFMT: u32 = 0o170000;
    /// Directory.
    pub const S_IFDIR: u32 = 0o040000;
    /// Regular file.
    pub const S_IFREG: u32 = 0o100000;
    /// Symbolic link.
    pub const S_IFLNK: u32 = 0o120000;
}

impl Inode {
    /// Whether the inode is a directory.
    pub fn is_dir(&self) -> bool {
        self.mode & mode::S_IFMT == mode::S_IFDIR
    }

    /// Whether the inode is a regular file.
    pub fn is_reg(&self) -> bool {
        self.mode & mode::S_IFMT == mode::S_IFREG
    }

    /// Whether the inode is a symbolic link.
    pub fn is_symlink(&self) -> bool {
        self.mode & mode::S_IFMT == mode::S_IFLNK
    }

    /// Largest file size the index structure can address.
    pub const fn max_size() -> u64 {
        (DIRECT_BLOCKS as u64 + PTRS_PER_BLOCK + PTRS_PER_BLOCK * PTRS_PER_BLOCK) * BLOCK_SIZE
    }

    /// The most blocks that mapping `len` bytes at `offset` into a file with no blocks can
    /// allocate: one per file block, plus the indirect block, the double-indirect block and
    /// one second-level block per 1024 file blocks that fall in their zones. Writers reserve
    /// space by this bound (or less, for blocks already mapped) before a write is acknowledged.
    pub fn worst_case_blocks(offset: u64, len: u64) -> u64 {
        if len == 0 {
            return 0;
        }
        let first = offset / BLOCK_SIZE;
        let last = (offset.saturating_add(len) - 1) / BLOCK_SIZE;
        let d = DIRECT_BLOCKS as u64;
        let mut n = last - first + 1;
        if first < d + PTRS_PER_BLOCK && last >= d {
            n += 1; // the indirect block
        }
        if last >= d + PTRS_PER_BLOCK {
            let lo = first.max(d + PTRS_PER_BLOCK) - d - PTRS_PER_BLOCK;
            let hi = last - d - PTRS_PER_BLOCK;
            n += 2 + hi / PTRS_PER_BLOCK - lo / PTRS_PER_BLOCK; // double-indirect + second level
        }
        n
    }

    /// Encodes to 128 bytes with a CRC32 at byte 124.
    pub fn encode(&self) -> [u8; INODE_SIZE] {
        let mut b = [0u8; INODE_SIZE];
        put_u32(&mut b, 0, self.mode);
        put_u32(&mut b, 4, self.uid);
        put_u32(&mut b, 8, self.gid);
        put_u32(&mut b, 12, self.nlink);
        put_u64(&mut b, 16, self.size);
        put_u64(&mut b, 24, self.atime as u64);
        put_u64(&mut b, 32, self.mtime as u64);
        put_u64(&mut b, 40, self.ctime as u64);
        for (i, d) in self.direct.iter().enumerate() {
            put_u32(&mut b, 48 + 4 * i, d.0);
        }
        put_u32(&mut b, 88, self.indirect.0);
        put_u32(&mut b, 92, self.dindirect.0);
        put_u32(&mut b, 96, self.parent.0);
        put_u32(&mut b, 100, self.rdev);
        put_u32(&mut b, 104, self.generation);
        let crc = crc32(&b[..CRC_AT]);
        put_u32(&mut b, CRC_AT, crc);
        b
    }

    /// Decodes 128 bytes. An all-zero slot decodes as a free (default) inode; anything else
    /// must carry a valid checksum and a size the index structure can address.
    pub fn decode(b: &[u8]) -> Result<Inode, LayoutError> {
        const WHAT: &str = "inode";
        need(WHAT, b, INODE_SIZE)?;
        if b[..INODE_SIZE].iter().all(|&x| x == 0) {
            return Ok(Inode::default());
        }
        check_crc(WHAT, b, CRC_AT)?;
        let mut direct = [BlockNo(0); DIRECT_BLOCKS];
        for (i, d) in direct.iter_mut().enumerate() {
            *d = BlockNo(get_u32(b, 48 + 4 * i));
        }
        let ino = Inode {
            mode: get_u32(b, 0),
            uid: get_u32(b, 4),
            gid: get_u32(b, 8),
            nlink: get_u32(b, 12),
            size: get_u64(b, 16),
            atime: get_u64(b, 24) as i64,
            mtime: get_u64(b, 32) as i64,
            ctime: get_u64(b, 40) as i64,
            direct,
            indirect: BlockNo(get_u32(b, 88)),
            dindirect: BlockNo(get_u32(b, 92)),
            parent: Ino(get_u32(b, 96)),
            rdev: get_u32(b, 100),
            generation: get_u32(b, 104),
        };
        if ino.size > Inode::max_size() {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "size", value: ino.size });
        }
        Ok(ino)
    }

    /// All block pointers held directly in the inode (direct, indirect, double-indirect).
    pub fn root_pointers(&self) -> impl Iterator<Item = BlockNo> + '_ {
        self.direct.iter().copied().chain([self.indirect, self.dindirect])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(mode: u32, uid: u32, size in 0..Inode::max_size(), mtime: i64, d0: u32, ind: u32) {
            let mut i = Inode { mode, uid, size, mtime, nlink: 1, ..Inode::default() };
            i.direct[0] = BlockNo(d0);
            i.indirect = BlockNo(ind);
            prop_assert_eq!(Inode::decode(&i.encode()).unwrap(), i);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Inode::decode(&bytes);
        }
    }

    #[test]
    fn zero_slot_is_free_and_corruption_is_detected() {
        assert_eq!(Inode::decode(&[0u8; 128]).unwrap(), Inode::default());
        let mut b = Inode { nlink: 1, ..Inode::default() }.encode();
        b[3] ^= 0x80;
        assert!(matches!(Inode::decode(&b), Err(LayoutError::BadChecksum { .. })));
    }
}
