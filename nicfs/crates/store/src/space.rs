//! The public space handle and the read seam shared by committed and staged views.

use nicfs_layout::{BLOCK_SIZE, Geometry, INODE_SIZE, Ino, Inode};
use nicfs_pm::{PmAddr, SharedPm};

use crate::FsError;

/// Read access to metadata, either committed (a [`Space`]) or staged (a [`crate::Txn`]).
///
/// Implementers return the newest bytes visible to their caller; they must not fail (all
/// addresses passed in were validated against the geometry by the caller).
pub trait MetaRead {
    /// The geometry of the file system.
    fn geo(&self) -> &Geometry;
    /// Reads metadata bytes.
    fn read_meta(&self, addr: PmAddr, buf: &mut [u8]);
    /// Reads one aligned 64-byte line of an index block; may be served by a cache.
    fn read_index_line(&self, addr: PmAddr, line: &mut [u8; 64]) {
        self.read_meta(addr, line);
    }
}

/// An opened public space: the PM namespace plus its validated geometry.
#[derive(Clone)]
pub struct Space {
    pm: SharedPm,
    geo: Geometry,
    uuid: u64,
}

/// What opening a space found wrong with the two superblock copies (the one in use is good).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SuperblockCheck {
    /// Why the primary (block 0) is unusable; the backup is in use then.
    pub primary: Option<String>,
    /// Why the backup (block 1) is unusable.
    pub backup: Option<String>,
}

impl SuperblockCheck {
    /// Whether both copies are good.
    pub fn is_clean(&self) -> bool {
        self.primary.is_none() && self.backup.is_none()
    }
}

impl Space {
    /// Opens the space: the primary superblock, or the backup if the primary is corrupt.
    pub fn open(pm: SharedPm) -> Result<Space, FsError> {
        Space::open_checked(pm).map(|(s, _)| s)
    }

    /// Like [`open`](Self::open), and says what is wrong with either superblock copy (a
    /// space opened from the backup works, but the primary needs rewriting).
    pub fn open_checked(pm: SharedPm) -> Result<(Space, SuperblockCheck), FsError> {
        let mut sb = [0u8; 96];
        pm.read(PmAddr(0), &mut sb);
        let primary = Geometry::decode_superblock(&sb);
        let backup = if pm.len() >= 2 * BLOCK_SIZE {
            pm.read(PmAddr(BLOCK_SIZE), &mut sb);
            Geometry::decode_superblock(&sb)
        } else {
            primary.clone()
        };
        let check = SuperblockCheck {
            primary: primary.as_ref().err().map(|e| e.to_string()),
            backup: backup.as_ref().err().map(|e| e.to_string()),
        };
        let (geo, uuid) = match (primary, backup) {
            (Ok(v), _) | (Err(_), Ok(v)) => v,
            (Err(e), Err(_)) => return Err(e.into()),
        };
        if geo.total_blocks as u64 * BLOCK_SIZE > pm.len() {
            return Err(FsError::corrupt(format!(
                "superblock says {} blocks but the namespace holds {} bytes",
                geo.total_blocks,
                pm.len()
            )));
        }
        Ok((Space { pm, geo, uuid }, check))
    }

    /// Rewrites both superblock copies from the geometry in use (after
    /// [`open_checked`](Self::open_checked) reported one of them bad). Offline only.
    pub fn rewrite_superblocks(&self) {
        let sb = self.geo.encode_superblock(self.uuid);
        for at in [PmAddr(0), PmAddr(BLOCK_SIZE)] {
            self.pm.store(at, &sb);
            self.pm.flush(at, sb.len() as u64);
        }
        self.pm.fence();
    }

    /// The PM namespace.
    pub fn pm(&self) -> &SharedPm {
        &self.pm
    }

    /// The file-system uuid chosen at mkfs.
    pub fn uuid(&self) -> u64 {
        self.uuid
    }

    /// A view of the same space through another PM handle (e.g. the back end's DMA channel).
    pub fn with_pm(&self, pm: SharedPm) -> Space {
        Space { pm, geo: self.geo, uuid: self.uuid }
    }

    /// Address of inode `ino` in the inode table.
    pub fn inode_addr(geo: &Geometry, ino: Ino) -> PmAddr {
        PmAddr(geo.itable_start as u64 * BLOCK_SIZE + ino.0 as u64 * INODE_SIZE as u64)
    }
}

impl MetaRead for Space {
    fn geo(&self) -> &Geometry {
        &self.geo
    }

    fn read_meta(&self, addr: PmAddr, buf: &mut [u8]) {
        self.pm.read(addr, buf);
    }
}

/// Reads and validates inode `ino`.
pub fn read_inode<R: MetaRead + ?Sized>(r: &R, ino: Ino) -> Result<Inode, FsError> {
    if !r.geo().is_valid_ino(ino) {
        return Err(FsError::corrupt(format!("{ino} out of range")));
    }
    let mut b = [0u8; INODE_SIZE];
    r.read_meta(Space::inode_addr(r.geo(), ino), &mut b);
    let inode = Inode::decode(&b).map_err(|e| FsError::corrupt(format!("{ino}: {e}")))?;
    if inode.nlink > 0 && inode.is_dir() && !inode.parent.is_none() && !r.geo().is_valid_ino(inode.parent) {
        return Err(FsError::corrupt(format!("{ino}: parent out of range")));
    }
    Ok(inode)
}
