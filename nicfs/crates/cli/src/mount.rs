//! The files of a mounted file system: the PM namespace, its comm region beside it, and the
//! lock that keeps two owners (a back end, `mkfs`, `fsck`) off one image.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use nicfs_comm::{CommError, CommRegion};
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
    /// The file could not be opened or locked.
    #[error("cannot lock image {path}: {source}")]
    Io {
        /// The image.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Exclusive ownership of a PM image file, held for as long as the value lives (an `flock`
/// on the file, so the kernel releases it when the owner dies, even by SIGKILL).
///
/// Every tool that changes the image as a whole takes it first: the back end (which recovers
/// and then applies logs), `mkfs` (which truncates the file: a running owner would die of
/// SIGBUS) and `fsck` (whose view of a live image would be torn). Front ends do not take it:
/// they attach to the back end that holds it.
#[derive(Debug)]
pub struct ImageLock {
    _file: File,
}

impl ImageLock {
    /// Locks `path`, creating the file if `create` (without truncating it). Fails at once with
    /// [`LockError::InUse`] if another open file holds the lock, in this process or another.
    pub fn acquire(path: &Path, create: bool) -> Result<ImageLock, LockError> {
        let io = |source| LockError::Io { path: path.into(), source };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        // SAFETY: flock on a descriptor this function owns; no memory is passed.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(ImageLock { _file: file });
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(io(e));
        }
        let pid =
            CommRegion::open(&comm_path(path)).map(|c| c.backend_pid().load(Ordering::Acquire)).unwrap_or(0);
        let holder = if nicfs_comm::pid_alive(pid) { format!(", by pid {pid}") } else { String::new() };
        Err(LockError::InUse { path: path.into(), holder })
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

    #[test]
    fn a_second_lock_on_the_same_image_is_refused_until_the_first_is_dropped() {
        let path = std::env::temp_dir().join(format!("nicfs-lock-test-{}", std::process::id()));
        let first = ImageLock::acquire(&path, true).unwrap();
        let err = ImageLock::acquire(&path, false).unwrap_err();
        assert!(matches!(err, LockError::InUse { .. }), "{err}");
        assert!(err.to_string().contains("is in use"), "{err}");
        drop(first);
        ImageLock::acquire(&path, false).unwrap();
        std::fs::remove_file(path).unwrap();
    }
}
