//! The files of a mounted file system: the PM namespace, its comm region beside it, and the
//! lock that keeps two owners (a back end, `mkfs`, `fsck`) off one image, and `mkfs` and
//! `fsck --repair` off an image a front end has mounted.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use nicfs_comm::{CommError, CommRegion, MAX_SLOTS};
use nicfs_pm::{CostModel, FastPm, MapError, MappedFile, SharedPm, TimedPm};

/// Where the comm region of the PM file `pm` lives (`<pm>.comm`).
pub fn comm_path(pm: &Path) -> PathBuf {
    let mut s = pm.as_os_str().to_owned();
    s.push(".comm");
    PathBuf::from(s)
}

/// Maps an existing PM file, optionally under a PM cost model.
pub fn open_pm(path: &Path, cost: Option<CostModel>) -> Result<SharedPm, MapError> {
    let fast = FastPm::new(MappedFile::open(path)?);
    Ok(match cost {
        Some(m) => Arc::new(TimedPm::new(fast, m)),
        None => Arc::new(fast),
    })
}

/// Opens the comm region of `pm`, creating it if it does not exist or is not valid. The
/// back end calls this at start; front ends use [`CommRegion::open`].
pub fn open_or_create_comm(pm: &Path) -> Result<CommRegion, CommError> {
    let p = comm_path(pm);
    match CommRegion::open(&p) {
        Ok(c) => Ok(c),
        Err(_) => CommRegion::create(&p),
    }
}

/// Why an image could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process owns the image.
    #[error(
        "image {path} is in use{holder} (a running `nicfs daemon`, `mount --with-daemon`, `mkfs` or `fsck`); stop it first"
    )]
    InUse {
        /// The image.
        path: PathBuf,
        /// ", by pid N" when the comm region names a live back end, else empty.
        holder: String,
    },
    /// A front end has the image mounted (`mkfs` and `fsck --repair` refuse it).
    #[error(
        "image {path} is mounted{holders} (a `nicfs mount` front end, perhaps waiting for its back end to be restarted); unmount it first"
    )]
    Mounted {
        /// The image.
        path: PathBuf,
        /// ", by pid N" (or "pids N, M") for the live front ends the comm region names.
        holders: String,
    },
    /// `mkfs` or `fsck --repair` is rewriting the image (a front end refuses to attach).
    #[error(
        "image {path} is being formatted or repaired (`nicfs mkfs` or `fsck --repair`); try again when it is done"
    )]
    Rewriting {
        /// The image.
        path: PathBuf,
    },
    /// The file could not be opened or locked.
    #[error("cannot lock image {path}: {source}")]
    Io {
        /// The image.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The byte of the image file whose lock is the owner's: exclusive, one at a time.
const OWNER_BYTE: i64 = 0;
/// The byte of the image file whose lock front ends share, and which the tools that rewrite
/// the image take exclusively.
const FRONT_END_BYTE: i64 = 1;

/// A hold on a PM image file, kept for as long as the value lives. It is an open-file-
/// description byte-range lock (`F_OFD_SETLK`) on the image itself, so the kernel releases it
/// when the holder dies, even by SIGKILL, and two holders in one process still exclude each
/// other. Two bytes, two roles:
///
/// ```text
///                        owner byte (0)   front-end byte (1)
/// back end (daemon,      exclusive        -
///   mount --with-daemon)
/// fsck                   exclusive        -
/// mkfs, fsck --repair    exclusive        exclusive
/// front end (mount)      -                shared
/// ```
///
/// So one owner at a time changes the image as a whole (a second back end would re-apply the
/// journal under the first; `mkfs` truncates the file, and a running owner would die of
/// SIGBUS; `fsck` would see a live image torn), and a mounted front end keeps `mkfs` and
/// `fsck --repair` off the image for as long as it is mounted, including while it waits for a
/// back end that died, while a new back end may still start and take over (issue 28).
#[derive(Debug)]
pub struct ImageLock {
    _file: File,
}

/// Locks `byte` of `file` (shared or exclusive); `Ok(false)` if another holder conflicts.
fn lock_byte(file: &File, byte: i64, exclusive: bool) -> std::io::Result<bool> {
    // SAFETY: `flock` is a plain C struct; all zero is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = (if exclusive { libc::F_WRLCK } else { libc::F_RDLCK }) as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = byte;
    fl.l_len = 1;
    // SAFETY: fcntl on a descriptor the caller owns, with a pointer to a live `flock`.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &fl) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(false),
        _ => Err(e),
    }
}

/// The live pids the comm region of `path` names: its back end, or its front ends.
fn live_pids(path: &Path, front_ends: bool) -> Vec<u64> {
    let Ok(c) = CommRegion::open(&comm_path(path)) else { return Vec::new() };
    let pids: Vec<u64> = if front_ends {
        (0..MAX_SLOTS).map(|i| c.slot(i).owner.load(Ordering::Acquire)).collect()
    } else {
        vec![c.backend_pid().load(Ordering::Acquire)]
    };
    pids.into_iter().filter(|&p| nicfs_comm::pid_alive(p)).collect()
}

fn by_pids(pids: &[u64]) -> String {
    let list = pids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    match pids.len() {
        0 => String::new(),
        1 => format!(", by pid {list}"),
        _ => format!(", by pids {list}"),
    }
}

impl ImageLock {
    fn open(path: &Path, create: bool) -> Result<File, LockError> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)
            .map_err(|source| LockError::Io { path: path.into(), source })
    }

    fn take_owner(path: &Path, file: &File) -> Result<(), LockError> {
        match lock_byte(file, OWNER_BYTE, true) {
            Ok(true) => Ok(()),
            Ok(false) => {
                Err(LockError::InUse { path: path.into(), holder: by_pids(&live_pids(path, false)) })
            }
            Err(source) => Err(LockError::Io { path: path.into(), source }),
        }
    }

    /// The owner's hold (a back end, `fsck` without `--repair`): locks `path`, creating the
    /// file if `create` (without truncating it). Fails at once with [`LockError::InUse`] if
    /// another owner holds it, in this process or another. Front ends do not stop it.
    pub fn owner(path: &Path, create: bool) -> Result<ImageLock, LockError> {
        let file = Self::open(path, create)?;
        Self::take_owner(path, &file)?;
        Ok(ImageLock { _file: file })
    }

    /// The hold of a tool that rewrites the image as a whole (`mkfs`, `fsck --repair`): the
    /// owner's, and no front end may have the image mounted ([`LockError::Mounted`] names
    /// them).
    pub fn rewrite(path: &Path, create: bool) -> Result<ImageLock, LockError> {
        let file = Self::open(path, create)?;
        Self::take_owner(path, &file)?;
        match lock_byte(&file, FRONT_END_BYTE, true) {
            Ok(true) => Ok(ImageLock { _file: file }),
            Ok(false) => {
                Err(LockError::Mounted { path: path.into(), holders: by_pids(&live_pids(path, true)) })
            }
            Err(source) => Err(LockError::Io { path: path.into(), source }),
        }
    }

    /// A front end's hold, for as long as it is mounted: shared with other front ends and
    /// with a back end; refused ([`LockError::Rewriting`]) while `mkfs` or `fsck --repair`
    /// runs.
    pub fn front_end(path: &Path) -> Result<ImageLock, LockError> {
        let file = Self::open(path, false)?;
        match lock_byte(&file, FRONT_END_BYTE, false) {
            Ok(true) => Ok(ImageLock { _file: file }),
            Ok(false) => Err(LockError::Rewriting { path: path.into() }),
            Err(source) => Err(LockError::Io { path: path.into(), source }),
        }
    }
}

/// A scratch directory on tmpfs when available (like a devdax namespace), else the temp dir.
pub fn scratch_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("nicfs-lock-test-{name}-{}", std::process::id()))
    }

    #[test]
    fn a_second_owner_of_the_same_image_is_refused_until_the_first_is_dropped() {
        let path = scratch("owner");
        let first = ImageLock::owner(&path, true).unwrap();
        let err = ImageLock::owner(&path, false).unwrap_err();
        assert!(matches!(err, LockError::InUse { .. }), "{err}");
        assert!(err.to_string().contains("is in use"), "{err}");
        assert!(matches!(ImageLock::rewrite(&path, false), Err(LockError::InUse { .. })));
        drop(first);
        ImageLock::owner(&path, false).unwrap();
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn front_ends_share_the_image_with_each_other_and_a_back_end_but_not_with_a_rewrite() {
        let path = scratch("front");
        let a = ImageLock::front_end(&path).map(|_| ()).unwrap_err();
        assert!(matches!(a, LockError::Io { .. }), "no image, no hold: {a}");
        std::fs::write(&path, b"").unwrap();
        let fe1 = ImageLock::front_end(&path).unwrap();
        let fe2 = ImageLock::front_end(&path).unwrap();
        let backend = ImageLock::owner(&path, false).unwrap();
        drop(backend);
        let err = ImageLock::rewrite(&path, false).unwrap_err();
        assert!(matches!(err, LockError::Mounted { .. }), "{err}");
        assert!(err.to_string().contains("is mounted"), "{err}");
        // A back end may still take over while the front ends wait.
        let backend = ImageLock::owner(&path, false).unwrap();
        drop((fe1, fe2, backend));
        let rewrite = ImageLock::rewrite(&path, false).unwrap();
        let err = ImageLock::front_end(&path).unwrap_err();
        assert!(matches!(err, LockError::Rewriting { .. }), "{err}");
        drop(rewrite);
        ImageLock::front_end(&path).unwrap();
        std::fs::remove_file(path).unwrap();
    }
}
