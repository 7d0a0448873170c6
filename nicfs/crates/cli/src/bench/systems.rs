//! The systems under test, behind one small trait.

use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use nicfs_backend::{Backend, BackendConfig};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig};
use nicfs_layout::{FormatConfig, Ino, Inode, ROOT_INO, mode};
use nicfs_pm::{CostModel, FastPm, MappedFile, PmAddr, SharedPm, TimedPm};
use nicfs_store::{Engine, LineCache, Space, bmap, mkfs};

/// A file system (or raw PM) driven by the benchmark: one file per process.
pub trait System: Sync {
    /// Short name for the table.
    fn name(&self) -> &str;
    /// Writes `data` at `off` of process `p`'s file; durable on return.
    fn write(&self, p: usize, off: u64, data: &[u8]) -> Result<()>;
    /// Reads `buf.len()` bytes at `off` of process `p`'s file.
    fn read(&self, p: usize, off: u64, buf: &mut [u8]) -> Result<()>;
    /// Waits until background work (log application) is done.
    fn settle(&self) -> Result<()> {
        Ok(())
    }
}

pub(crate) fn timed_pm(path: &std::path::Path, size: u64, cost: &CostModel) -> Result<SharedPm> {
    let fast = FastPm::new(MappedFile::create(path, size)?);
    Ok(Arc::new(TimedPm::new(fast, cost.clone())))
}

/// NICFS: front ends plus a threaded back end.
pub struct NicfsSys {
    clients: Vec<Client>,
    inos: Vec<Ino>,
    backend: Option<Backend>,
    label: String,
}

impl NicfsSys {
    /// Formats `path`, starts the back end and attaches `procs` front ends with a file each.
    /// `log_mib` is the size of each front end's log data region: small logs show sustained
    /// throughput (bounded by the back end through back-pressure), large ones the front end's
    /// burst throughput.
    pub fn new(
        path: &std::path::Path,
        procs: usize,
        cost: &CostModel,
        be: BackendConfig,
        label: &str,
        log_mib: u64,
    ) -> Result<NicfsSys> {
        let log = log_mib.max(1) << 20;
        let headers = ((log / 256).next_power_of_two() as u32).clamp(64, 1 << 20);
        let fmt = FormatConfig {
            size_bytes: (512 << 20) + 4 * (log + 4096 + headers as u64 * 64),
            inodes: 1024,
            log_spaces: 4,
            log_headers: headers,
            log_data_bytes: log,
            journal_blocks: 256,
        };
        let pm = timed_pm(path, fmt.size_bytes, cost)?;
        mkfs(pm.as_ref(), &fmt, 1)?;
        let comm = Arc::new(CommRegion::anonymous()?);
        let backend = Backend::start(pm.clone(), comm.clone(), be)?;
        let mut clients = Vec::new();
        let mut inos = Vec::new();
        for p in 0..procs {
            let c = Client::attach(pm.clone(), comm.clone(), FrontendConfig::default())?;
            let st = c.create(ROOT_INO, format!("f{p}").as_bytes(), mode::S_IFREG | 0o644, 0, 0, 0, b"")?;
            inos.push(st.ino);
            clients.push(c);
        }
        Ok(NicfsSys { clients, inos, backend: Some(backend), label: label.to_string() })
    }
}

impl Drop for NicfsSys {
    fn drop(&mut self) {
        self.clients.clear();
        if let Some(b) = self.backend.take() {
            b.stop();
        }
    }
}

impl System for NicfsSys {
    fn name(&self) -> &str {
        &self.label
    }

    fn write(&self, p: usize, off: u64, data: &[u8]) -> Result<()> {
        self.clients[p].write(self.inos[p], off, data)?;
        Ok(())
    }

    fn read(&self, p: usize, off: u64, buf: &mut [u8]) -> Result<()> {
        self.clients[p].read(self.inos[p], off, buf)?;
        Ok(())
    }

    fn settle(&self) -> Result<()> {
        for c in &self.clients {
            c.sync_all()?;
        }
        Ok(())
    }
}

/// Raw PM: each process owns a region; write = copy + flush + fence.
pub struct RawSys {
    pm: SharedPm,
    region: u64,
}

impl RawSys {
    /// A PM file with `procs` regions of `region` bytes.
    pub fn new(path: &std::path::Path, procs: usize, region: u64, cost: &CostModel) -> Result<RawSys> {
        let size = (procs as u64 * region).div_ceil(4096) * 4096;
        Ok(RawSys { pm: timed_pm(path, size, cost)?, region })
    }
}

impl System for RawSys {
    fn name(&self) -> &str {
        "raw-pm"
    }

    fn write(&self, p: usize, off: u64, data: &[u8]) -> Result<()> {
        let at = PmAddr(p as u64 * self.region + off);
        self.pm.store(at, data);
        self.pm.flush(at, data.len() as u64);
        self.pm.fence();
        Ok(())
    }

    fn read(&self, p: usize, off: u64, buf: &mut [u8]) -> Result<()> {
        self.pm.read(PmAddr(p as u64 * self.region + off), buf);
        Ok(())
    }
}

/// The in-place Ext2-style file system (Ext4-DAX stand-in) on the same emulated PM.
pub struct InPlaceSys {
    eng: Mutex<Engine>,
    space: Space,
    pm: SharedPm,
    files: Vec<Mutex<(Ino, Inode)>>,
}

impl InPlaceSys {
    /// Formats `path` and creates one file per process.
    pub fn new(path: &std::path::Path, procs: usize, cost: &CostModel) -> Result<InPlaceSys> {
        let fmt = FormatConfig {
            size_bytes: 512 << 20,
            inodes: 1024,
            log_spaces: 1,
            log_headers: 64,
            log_data_bytes: 64 << 10,
            journal_blocks: 256,
        };
        let pm = timed_pm(path, fmt.size_bytes, cost)?;
        mkfs(pm.as_ref(), &fmt, 1)?;
        let space = Space::open(pm.clone())?;
        let mut eng = Engine::new(space.clone(), Arc::new(LineCache::new(0)))?;
        let mut files = Vec::new();
        for p in 0..procs {
            let ino = eng.alloc_mut().reserve_inode()?;
            let mut t = eng.begin();
            t.op_create(ROOT_INO, ino, mode::S_IFREG | 0o644, 0, 0, 0, format!("f{p}").as_bytes(), b"", 0)?;
            let inode = t.get_inode(ino)?;
            t.commit()?;
            files.push(Mutex::new((ino, inode)));
        }
        Ok(InPlaceSys { eng: Mutex::new(eng), space, pm, files })
    }
}

impl System for InPlaceSys {
    fn name(&self) -> &str {
        "inplace"
    }

    fn write(&self, p: usize, off: u64, data: &[u8]) -> Result<()> {
        let mut f = self.files[p].lock().unwrap_or_else(|e| e.into_inner());
        let (ino, ref mut cached) = *f;
        let end = off + data.len() as u64;
        // Fast path: the blocks exist and the size does not change: data in place only.
        let mut all_mapped = end <= cached.size;
        let mut fb = off / 4096;
        while all_mapped && fb * 4096 < end {
            all_mapped = bmap(&self.space, cached, fb)?.is_some();
            fb += 1;
        }
        if all_mapped {
            let mut pos = off;
            while pos < end {
                let b = bmap(&self.space, cached, pos / 4096)?.context("mapped block")?;
                let n = (4096 - pos % 4096).min(end - pos);
                let at = PmAddr(b.byte_offset() + pos % 4096);
                let src = &data[(pos - off) as usize..(pos - off + n) as usize];
                self.pm.store(at, src);
                self.pm.flush(at, n);
                pos += n;
            }
            self.pm.fence();
            return Ok(());
        }
        let mut eng = self.eng.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = eng.begin();
        let mut inode = t.get_inode(ino)?;
        let mut src = 0usize;
        for c in t.map_write(&mut inode, off, data.len() as u64)? {
            self.pm.store(c.dst, &data[src..src + c.len as usize]);
            self.pm.flush(c.dst, c.len);
            src += c.len as usize;
        }
        inode.size = inode.size.max(end);
        t.put_inode(ino, &inode);
        t.commit()?;
        *cached = inode;
        Ok(())
    }

    fn read(&self, p: usize, off: u64, buf: &mut [u8]) -> Result<()> {
        let inode = self.files[p].lock().unwrap_or_else(|e| e.into_inner()).1.clone();
        let end = (off + buf.len() as u64).min(inode.size);
        let mut pos = off;
        while pos < end {
            let n = (4096 - pos % 4096).min(end - pos);
            let dst = &mut buf[(pos - off) as usize..(pos - off + n) as usize];
            match bmap(&self.space, &inode, pos / 4096)? {
                Some(b) => self.pm.read(PmAddr(b.byte_offset() + pos % 4096), dst),
                None => dst.fill(0),
            }
            pos += n;
        }
        Ok(())
    }
}
