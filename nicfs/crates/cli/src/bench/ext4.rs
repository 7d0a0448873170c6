//! ext4 on a RAM-backed loop device, when the machine allows it (root, loop devices, ext4).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

use super::systems::System;

/// ext4 mounted from a loop device over a tmpfs file; writes are `pwrite` + `fdatasync`.
pub struct Ext4Sys {
    files: Vec<File>,
    mnt: PathBuf,
    dev: String,
    img: PathBuf,
}

fn sh(cmd: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(cmd).args(args).output()?;
    if !out.status.success() {
        bail!("{cmd} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Ext4Sys {
    /// Sets up the image, loop device and mount, and one file per process. Errors say why the
    /// machine does not allow it.
    pub fn new(dir: &Path, procs: usize, file_size: u64) -> Result<Ext4Sys> {
        let img = dir.join("nicfs-bench-ext4.img");
        let mnt = std::env::temp_dir().join("nicfs-bench-ext4");
        std::fs::create_dir_all(&mnt)?;
        File::create(&img)?.set_len(512 << 20)?;
        let dev = sh("losetup", &["-f", "--show", &img.to_string_lossy()])?;
        let cleanup = |e: anyhow::Error| {
            let _ = sh("losetup", &["-d", &dev]);
            e
        };
        sh("mkfs.ext4", &["-q", "-F", &dev]).map_err(cleanup)?;
        sh("mount", &["-t", "ext4", &dev, &mnt.to_string_lossy()]).map_err(cleanup)?;
        let mut files = Vec::new();
        for p in 0..procs {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(mnt.join(format!("f{p}")))?;
            f.set_len(file_size)?;
            files.push(f);
        }
        Ok(Ext4Sys { files, mnt, dev, img })
    }
}

impl Drop for Ext4Sys {
    fn drop(&mut self) {
        self.files.clear();
        let _ = sh("umount", &[&self.mnt.to_string_lossy()]);
        let _ = sh("losetup", &["-d", &self.dev]);
        let _ = std::fs::remove_file(&self.img);
    }
}

impl System for Ext4Sys {
    fn name(&self) -> &str {
        "ext4-loop"
    }

    fn write(&self, p: usize, off: u64, data: &[u8]) -> Result<()> {
        self.files[p].write_all_at(data, off)?;
        self.files[p].sync_data()?;
        Ok(())
    }

    fn read(&self, p: usize, off: u64, buf: &mut [u8]) -> Result<()> {
        self.files[p].read_exact_at(buf, off)?;
        Ok(())
    }
}
