//! Directory entries: fixed 272-byte slots, 15 per block, each with a CRC32.
//!
//! ```text
//! 0..4 inode (0 = free slot) | 4..6 name length | 6 type | 7 zero | 8..12 CRC32 | 12.. name
//! ```
//!
//! The CRC covers bytes 0..8 and the name, so a flipped bit in the inode number, the type, the
//! length or the name is an error, not a silently different entry. Removing an entry clears
//! bytes 0..8 only; a free slot's stale name and CRC are ignored.

use crate::codec::{get_u16, get_u32, need, put_u16, put_u32};
use crate::{BLOCK_SIZE, Ino, LayoutError};

/// Size of one directory-entry slot in bytes.
pub const DIRENT_SIZE: usize = 272;
const CRC_AT: usize = 8;
const NAME_AT: usize = 12;
/// Directory-entry slots per block.
pub const DIRENTS_PER_BLOCK: usize = BLOCK_SIZE as usize / DIRENT_SIZE;
/// Longest file name in bytes.
pub const NAME_MAX: usize = 255;

/// File type recorded in a directory entry (like `d_type`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FileType {
    /// Regular file.
    Regular,
    /// Directory.
    Directory,
    /// Symbolic link.
    Symlink,
    /// Anything else (device, FIFO, socket).
    Other,
}

impl FileType {
    /// The type of an inode `mode`.
    pub fn from_mode(mode: u32) -> FileType {
        match mode & crate::inode::mode::S_IFMT {
            crate::inode::mode::S_IFREG => FileType::Regular,
            crate::inode::mode::S_IFDIR => FileType::Directory,
            crate::inode::mode::S_IFLNK => FileType::Symlink,
            _ => FileType::Other,
        }
    }

    fn code(self) -> u8 {
        match self {
            FileType::Regular => 1,
            FileType::Directory => 2,
            FileType::Symlink => 3,
            FileType::Other => 4,
        }
    }

    fn from_code(c: u8) -> Option<FileType> {
        Some(match c {
            1 => FileType::Regular,
            2 => FileType::Directory,
            3 => FileType::Symlink,
            4 => FileType::Other,
            _ => return None,
        })
    }
}

/// A used directory entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirent {
    /// Target inode.
    pub ino: Ino,
    /// Type of the target.
    pub ftype: FileType,
    /// Name: 1..=255 bytes, no `/` and no NUL, not `.` or `..`.
    pub name: Vec<u8>,
}

/// Whether `name` is a legal single path component.
pub fn is_valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= NAME_MAX
        && name != b"."
        && name != b".."
        && !name.iter().any(|&c| c == b'/' || c == 0)
}

/// The checksum of a slot: its first 8 bytes, then `len` name bytes.
fn slot_crc(b: &[u8], len: usize) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&b[..CRC_AT]);
    h.update(&b[NAME_AT..NAME_AT + len]);
    h.finalize()
}

impl Dirent {
    /// Encodes into a slot.
    pub fn encode(&self) -> [u8; DIRENT_SIZE] {
        let mut b = [0u8; DIRENT_SIZE];
        put_u32(&mut b, 0, self.ino.0);
        put_u16(&mut b, 4, self.name.len() as u16);
        b[6] = self.ftype.code();
        b[NAME_AT..NAME_AT + self.name.len()].copy_from_slice(&self.name);
        let crc = slot_crc(&b, self.name.len());
        put_u32(&mut b, CRC_AT, crc);
        b
    }

    /// Decodes a slot: `Ok(None)` for a free slot (inode 0), an error for a malformed or
    /// corrupt one.
    pub fn decode(b: &[u8]) -> Result<Option<Dirent>, LayoutError> {
        const WHAT: &str = "directory entry";
        need(WHAT, b, DIRENT_SIZE)?;
        let ino = Ino(get_u32(b, 0));
        if ino.is_none() {
            return Ok(None);
        }
        let len = get_u16(b, 4) as usize;
        if len == 0 || len > NAME_MAX {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "name_len", value: len as u64 });
        }
        let stored = get_u32(b, CRC_AT);
        let computed = slot_crc(b, len);
        if stored != computed {
            return Err(LayoutError::BadChecksum { what: WHAT, stored, computed });
        }
        let ftype = FileType::from_code(b[6]).ok_or(LayoutError::OutOfRange {
            what: WHAT,
            field: "type",
            value: b[6] as u64,
        })?;
        let name = &b[NAME_AT..NAME_AT + len];
        if !is_valid_name(name) || b[7] != 0 {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "name", value: len as u64 });
        }
        Ok(Some(Dirent { ino, ftype, name: name.to_vec() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(ino in 1u32.., name in "[a-zA-Z0-9._-]{1,255}") {
            prop_assume!(name != "." && name != "..");
            let d = Dirent { ino: Ino(ino), ftype: FileType::Regular, name: name.into_bytes() };
            prop_assert_eq!(Dirent::decode(&d.encode()).unwrap(), Some(d));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = Dirent::decode(&bytes);
        }
    }

    /// Regression (issue 18): entries carried no checksum, so a flipped bit renamed `paced3`
    /// to `pabed3` and fsck reported 0 problems. Every single-bit flip in the checked bytes of
    /// a used entry is now an error.
    #[test]
    fn regression_issue_18_any_bit_flip_in_an_entry_is_detected() {
        let d = Dirent { ino: Ino(4242), ftype: FileType::Regular, name: b"paced3".to_vec() };
        let good = d.encode();
        assert_eq!(Dirent::decode(&good).unwrap(), Some(d.clone()));
        for bit in 0..(NAME_AT + d.name.len()) * 8 {
            let mut b = good;
            b[bit / 8] ^= 1 << (bit % 8);
            match Dirent::decode(&b) {
                Err(_) => {}
                Ok(other) => panic!("bit {bit}: flipped entry decoded as {other:?}"),
            }
        }
    }

    #[test]
    fn rejects_bad_names() {
        let d = Dirent { ino: Ino(3), ftype: FileType::Directory, name: b"ok".to_vec() };
        let mut b = d.encode();
        b[NAME_AT] = b'/';
        let crc = slot_crc(&b, 2);
        put_u32(&mut b, CRC_AT, crc);
        assert!(matches!(Dirent::decode(&b), Err(LayoutError::OutOfRange { field: "name", .. })));
        assert!(!is_valid_name(b".."));
        assert!(!is_valid_name(&[b'a'; 256]));
        assert!(is_valid_name(&[b'a'; 255]));
    }
}
