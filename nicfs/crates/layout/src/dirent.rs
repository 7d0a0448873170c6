//! Directory entries: fixed 264-byte slots, 15 per block.

use crate::codec::{get_u16, get_u32, need, put_u16, put_u32};
use crate::{BLOCK_SIZE, Ino, LayoutError};

/// Size of one directory-entry slot in bytes.
pub const DIRENT_SIZE: usize = 264;
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

impl Dirent {
    /// Encodes into a slot.
    pub fn encode(&self) -> [u8; DIRENT_SIZE] {
        let mut b = [0u8; DIRENT_SIZE];
        put_u32(&mut b, 0, self.ino.0);
        put_u16(&mut b, 4, self.name.len() as u16);
        b[6] = self.ftype.code();
        b[8..8 + self.name.len()].copy_from_slice(&self.name);
        b
    }

    /// Decodes a slot: `Ok(None)` for a free slot (inode 0), an error for a malformed one.
    pub fn decode(b: &[u8]) -> Result<Option<Dirent>, LayoutError> {
        const WHAT: &str = "directory entry";
        need(WHAT, b, DIRENT_SIZE)?;
        let ino = Ino(get_u32(b, 0));
        if ino.is_none() {
            return Ok(None);
        }
        let len = get_u16(b, 4) as usize;
        let ftype = FileType::from_code(b[6]).ok_or(LayoutError::OutOfRange {
            what: WHAT,
            field: "type",
            value: b[6] as u64,
        })?;
        if len == 0 || len > NAME_MAX || !is_valid_name(&b[8..8 + len]) {
            return Err(LayoutError::OutOfRange { what: WHAT, field: "name", value: len as u64 });
        }
        Ok(Some(Dirent { ino, ftype, name: b[8..8 + len].to_vec() }))
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

    #[test]
    fn rejects_bad_names() {
        let mut b = Dirent { ino: Ino(3), ftype: FileType::Directory, name: b"ok".to_vec() }.encode();
        b[8] = b'/';
        assert!(Dirent::decode(&b).is_err());
        assert!(!is_valid_name(b".."));
        assert!(!is_valid_name(&[b'a'; 256]));
        assert!(is_valid_name(&[b'a'; 255]));
    }
}
