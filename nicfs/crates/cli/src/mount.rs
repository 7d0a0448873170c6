//! The files of a mounted file system: the PM namespace and its comm region beside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// A scratch directory on tmpfs when available (like a devdax namespace), else the temp dir.
pub fn scratch_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() }
}
