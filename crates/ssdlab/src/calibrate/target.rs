//! What calibration measures, and the checks made before fio writes anything to it: it exists,
//! it can be opened for writing, it is large enough, and (a block device or a file) it holds no
//! file system or partition table unless the user says to overwrite it.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;

use super::CalibrateError;

use crate::pts::NbdSizeError;
pub use crate::pts::Target;

/// The name of the first signature of a file system, partition table or volume found in
/// `head` (the first 68 KiB or more of a device), if any. Checked: MBR/DOS and GPT partition
/// tables, ext2/3/4, XFS, Btrfs, swap, LUKS, NTFS, FAT, LVM2, ZFS is not (its labels sit at the
/// end as well: blkid finds it).
pub fn fs_signature(head: &[u8]) -> Option<&'static str> {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    let checks: [(&str, usize, &[u8]); 11] = [
        ("GPT partition table", 512, b"EFI PART"),
        ("xfs", 0, b"XFSB"),
        ("LUKS", 0, b"LUKS\xba\xbe"),
        ("ntfs", 3, b"NTFS    "),
        ("vfat", 82, b"FAT32   "),
        ("vfat", 54, b"FAT1"),
        ("ext2/3/4", 0x438, &[0x53, 0xEF]),
        ("btrfs", 0x10040, b"_BHRfS_M"),
        ("swap", 4086, b"SWAPSPACE2"),
        ("swap", 4086, b"SWAP-SPACE"),
        ("LVM2", 536, b"LVM2 001"),
    ];
    if let Some((name, _, _)) = checks.iter().find(|(_, off, magic)| at(*off, magic)) {
        return Some(name);
    }
    // A DOS partition table: the boot signature and at least one partition entry with a type.
    let entries = (0..4).any(|i| head.get(446 + 16 * i + 4).is_some_and(|&t| t != 0));
    (at(510, &[0x55, 0xAA]) && entries).then_some("DOS partition table")
}

/// Checks `target` before anything is written and returns its size in bytes. A path must
/// exist, be a regular file or a block device, open for writing, be at least `region` long, and
/// hold no file system (by [`fs_signature`] and, for a block device, `blkid -p`) unless `force`.
pub fn check_target(target: &Target, region: u64, force: bool) -> Result<u64, CalibrateError> {
    let size = match target {
        Target::Nbd(uri) => nbd_size(uri)?,
        Target::Path(p) => check_path(p, force)?,
    };
    if size < region {
        return Err(CalibrateError::new(format!(
            "{}: {size} bytes, smaller than the plan's region of {region} bytes: give a smaller region (--plan) or a larger target",
            target.show()
        )));
    }
    Ok(size)
}

fn check_path(p: &Path, force: bool) -> Result<u64, CalibrateError> {
    let show = p.display();
    let err = |m: String| CalibrateError::new(format!("{show}: {m}"));
    let meta = std::fs::metadata(p).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            err("does not exist (create a file first, e.g. fallocate -l 2G FILE)".into())
        }
        _ => err(e.to_string()),
    })?;
    let block = meta.file_type().is_block_device();
    if !block && !meta.is_file() {
        return Err(err("is neither a block device nor a regular file".into()));
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(p)
        .map_err(|e| err(format!("cannot be opened for writing ({e})")))?;
    let mut head = Vec::with_capacity(128 << 10);
    (&mut f)
        .take(128 << 10)
        .read_to_end(&mut head)
        .map_err(|e| err(format!("reading its first sectors: {e}")))?;
    if !force {
        let found = fs_signature(&head).map(str::to_string).or_else(|| block.then(|| blkid(p)).flatten());
        if let Some(kind) = found {
            return Err(err(format!(
                "holds a {kind} (calibration writes over it): refusing; --force-overwrite destroys its data"
            )));
        }
    }
    use std::io::{Seek, SeekFrom};
    f.seek(SeekFrom::End(0)).map_err(|e| err(format!("sizing: {e}")))
}

/// What `blkid -p` finds on a block device (`None` if nothing, or blkid is absent).
fn blkid(p: &Path) -> Option<String> {
    let out = Command::new("blkid").args(["-p", "-o", "value", "-s", "TYPE"]).arg(p).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let pt = Command::new("blkid").args(["-p", "-o", "value", "-s", "PTTYPE"]).arg(p).output().ok();
    let pt = pt.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    match (text.is_empty(), pt.is_empty()) {
        (false, _) => Some(text),
        (true, false) => Some(format!("{pt} partition table")),
        _ => None,
    }
}

/// An NBD export's size, from `nbdinfo --size`.
fn nbd_size(uri: &str) -> Result<u64, CalibrateError> {
    crate::pts::nbd_size(uri).map_err(|e| {
        CalibrateError::new(match e {
            NbdSizeError::Run(e) => format!("sizing {uri}: running nbdinfo (libnbd's tool): {e}"),
            NbdSizeError::Failed(line) => format!("{uri}: cannot be reached: nbdinfo: {line}"),
            NbdSizeError::Unreadable(text) => format!("sizing {uri}: nbdinfo printed {text:?}"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_found_and_zeros_are_clean() {
        let mut head = vec![0u8; 128 << 10];
        assert_eq!(fs_signature(&head), None);
        head[0x438] = 0x53;
        head[0x439] = 0xEF;
        assert_eq!(fs_signature(&head), Some("ext2/3/4"));
        let mut head = vec![0u8; 128 << 10];
        head[0x10040..0x10048].copy_from_slice(b"_BHRfS_M");
        assert_eq!(fs_signature(&head), Some("btrfs"));
        let mut head = vec![0u8; 4096];
        head[510] = 0x55;
        head[511] = 0xAA;
        assert_eq!(fs_signature(&head), None, "a boot signature alone is no partition table");
        head[446 + 4] = 0x83;
        assert_eq!(fs_signature(&head), Some("DOS partition table"));
    }

    #[test]
    fn bad_targets_are_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let e = check_target(&Target::Path(missing), 1, false).unwrap_err().to_string();
        assert!(e.ends_with("nope: does not exist (create a file first, e.g. fallocate -l 2G FILE)"), "{e}");
        let small = dir.path().join("small");
        std::fs::write(&small, vec![0u8; 4096]).unwrap();
        assert_eq!(check_target(&Target::Path(small.clone()), 4096, false).unwrap(), 4096);
        let e = check_target(&Target::Path(small.clone()), 8192, false).unwrap_err().to_string();
        assert!(e.contains("smaller than the plan's region of 8192 bytes"), "{e}");
        let fs = dir.path().join("fs");
        let mut bytes = vec![0u8; 8192];
        bytes[..4].copy_from_slice(b"XFSB");
        std::fs::write(&fs, &bytes).unwrap();
        let e = check_target(&Target::Path(fs.clone()), 4096, false).unwrap_err().to_string();
        assert!(e.contains("holds a xfs (calibration writes over it): refusing"), "{e}");
        assert_eq!(std::fs::read(&fs).unwrap(), bytes, "nothing written");
        assert_eq!(check_target(&Target::Path(fs), 4096, true).unwrap(), 8192);
        let e = check_target(&Target::Path(dir.path().to_path_buf()), 1, false).unwrap_err().to_string();
        assert!(e.ends_with("is neither a block device nor a regular file"), "{e}");
    }

    #[test]
    fn a_read_only_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ro = dir.path().join("ro");
        std::fs::write(&ro, vec![0u8; 4096]).unwrap();
        let mut perm = std::fs::metadata(&ro).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o444);
        std::fs::set_permissions(&ro, perm).unwrap();
        // root opens any file for writing: the check is then only meaningful for others.
        if std::fs::OpenOptions::new().write(true).open(&ro).is_ok() {
            eprintln!("skipped: running as root, a read-only file opens for writing");
            return;
        }
        let e = check_target(&Target::Path(ro), 1, false).unwrap_err().to_string();
        assert!(e.contains("cannot be opened for writing"), "{e}");
    }
}
