//! Output paths checked before any work starts, so that a run that ages a device for a minute
//! does not fail at the end because the file it was to write cannot be created.
//!
//! The checks are the cheap ones: the directory exists (or, for a directory the command
//! creates, its nearest existing ancestor is a directory), it is writable, and the path is not
//! itself a directory. Nothing is created. Writing can still fail later (a full disk).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{Result, bail};

/// Fails unless a file can be created (or replaced) at `path`; `flag` names the option in the
/// message: `--out /nonexistent/x.state: directory /nonexistent does not exist`.
pub fn file(flag: &str, path: &Path) -> Result<()> {
    let show = path.display();
    if path.is_dir() {
        bail!("{flag} {show}: is a directory");
    }
    let dir = parent(path);
    if !dir.exists() {
        bail!("{flag} {show}: directory {} does not exist", dir.display());
    }
    if !dir.is_dir() {
        bail!("{flag} {show}: {} is not a directory", dir.display());
    }
    if let Err(e) = writable(dir) {
        bail!("{flag} {show}: cannot write in {}: {e}", dir.display());
    }
    Ok(())
}

/// Fails unless `dir` is a writable directory or can be created (as `create_dir_all` would):
/// `--plot figs/a: figs is not a directory`.
pub fn dir(flag: &str, dir: &Path) -> Result<()> {
    let show = dir.display();
    let mut at = dir;
    while !at.exists() {
        at = parent(at);
    }
    if !at.is_dir() {
        bail!("{flag} {show}: {} is not a directory", at.display());
    }
    if let Err(e) = writable(at) {
        bail!("{flag} {show}: cannot write in {}: {e}", at.display());
    }
    Ok(())
}

/// The directory `path` is in (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Whether this process may create files in the directory `dir` (write and search permission).
fn writable(dir: &Path) -> io::Result<()> {
    let c =
        CString::new(dir.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a NUL-terminated string that lives across the call; access(2) only reads it.
    match unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_wrong_directories_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let plain = d.join("plain");
        std::fs::write(&plain, "x").unwrap();
        assert!(file("--json", &d.join("r.json")).is_ok());
        assert!(file("--json", Path::new("r.json")).is_ok(), "a bare name is in .");
        let e = file("--out", &d.join("no/x.state")).unwrap_err().to_string();
        assert!(
            e.ends_with(&format!("no/x.state: directory {} does not exist", d.join("no").display())),
            "{e}"
        );
        let e = file("--json", &plain.join("r.json")).unwrap_err().to_string();
        assert!(e.ends_with(&format!("{} is not a directory", plain.display())), "{e}");
        assert!(file("--json", d).unwrap_err().to_string().ends_with(": is a directory"));
        assert!(dir("--plot", &d.join("a/b/c")).is_ok(), "created with its parents");
        let e = dir("--plot", &plain.join("figs")).unwrap_err().to_string();
        assert!(e.ends_with(&format!("{} is not a directory", plain.display())), "{e}");
        assert!(!d.join("a").exists(), "nothing is created");
    }
}
