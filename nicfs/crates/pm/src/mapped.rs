//! A file-backed shared memory map: the emulated devdax namespace.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use memmap2::MmapRaw;

/// Why a PM file could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// The file could not be created, opened or resized.
    #[error("cannot open PM file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is too small or not a multiple of the cache-line size.
    #[error("PM file {path} has unusable size {len} bytes (need a non-zero multiple of 4096)")]
    BadSize {
        /// The file.
        path: PathBuf,
        /// Its size.
        len: u64,
    },
}

/// Maps the whole file shared and pre-faults it (`MAP_POPULATE`): like a devdax namespace,
/// the emulated PM is resident, so no page fault lands in the middle of a measured access.
fn populate(file: &std::fs::File) -> std::io::Result<MmapRaw> {
    memmap2::MmapOptions::new().populate().map_raw(file)
}

/// A shared mapping of a whole file. Every process that maps the same file sees the same bytes.
pub struct MappedFile {
    map: MmapRaw,
    len: u64,
}

// SAFETY: the map is plain shared memory; synchronisation is the caller's job (see `Pm`).
unsafe impl Send for MappedFile {}
// SAFETY: as above; all access goes through raw pointers, never through `&mut` aliases.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Creates (or truncates) `path` to `len` bytes of zeroes and maps it.
    pub fn create(path: &Path, len: u64) -> Result<MappedFile, MapError> {
        if len == 0 || !len.is_multiple_of(4096) {
            return Err(MapError::BadSize { path: path.into(), len });
        }
        let io = |source| MapError::Io { path: path.into(), source };
        let file =
            OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path).map_err(io)?;
        file.set_len(len).map_err(io)?;
        let map = populate(&file).map_err(io)?;
        Ok(MappedFile { map, len })
    }

    /// Maps an existing file.
    pub fn open(path: &Path) -> Result<MappedFile, MapError> {
        let io = |source| MapError::Io { path: path.into(), source };
        let file = OpenOptions::new().read(true).write(true).open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len == 0 || len % 4096 != 0 {
            return Err(MapError::BadSize { path: path.into(), len });
        }
        let map = populate(&file).map_err(io)?;
        Ok(MappedFile { map, len })
    }

    /// Maps an existing file privately (copy on write): stores change this process's view
    /// only, never the file. For checks that must see an image as recovery would leave it
    /// without changing it (`fsck` without `--repair` replays the journal into such a view).
    pub fn open_private(path: &Path) -> Result<MappedFile, MapError> {
        let io = |source| MapError::Io { path: path.into(), source };
        let file = OpenOptions::new().read(true).open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len == 0 || len % 4096 != 0 {
            return Err(MapError::BadSize { path: path.into(), len });
        }
        // SAFETY: a private mapping; other processes changing the file underneath are the
        // caller's problem (fsck holds the image lock).
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&file) }.map_err(io)?;
        Ok(MappedFile { map: MmapRaw::from(map), len })
    }

    /// An anonymous private mapping (for tests and single-process tools).
    pub fn anonymous(len: u64) -> Result<MappedFile, MapError> {
        if len == 0 || !len.is_multiple_of(4096) {
            return Err(MapError::BadSize { path: "<anonymous>".into(), len });
        }
        let map = memmap2::MmapOptions::new()
            .len(len as usize)
            .map_anon()
            .map_err(|source| MapError::Io { path: "<anonymous>".into(), source })?;
        Ok(MappedFile { map: MmapRaw::from(map), len })
    }

    /// Length of the mapping in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the mapping is empty (never: construction rejects empty files).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Base pointer of the mapping.
    pub fn base(&self) -> *mut u8 {
        self.map.as_mut_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_map_never_changes_the_file() {
        let path = std::env::temp_dir().join(format!("nicfs-private-map-{}", std::process::id()));
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let m = MappedFile::open_private(&path).unwrap();
        // SAFETY: in bounds of the 8192-byte mapping, which this test alone uses.
        unsafe {
            *m.base().add(100) = 9;
            assert_eq!(*m.base().add(100), 9, "the view sees its own store");
        }
        drop(m);
        assert_eq!(std::fs::read(&path).unwrap()[100], 7);
        std::fs::remove_file(path).unwrap();
    }
}
