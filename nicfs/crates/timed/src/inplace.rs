//! The in-place library baseline in the model: the public-space engine NICFS's back end uses,
//! called directly by each process as a library on the same PM, with no log and no kernel.
//! Data goes in place (store, flush, fence); a write that allocates or grows the file commits
//! a journal transaction (serialised by one engine lock). It is the floor of what a file system
//! on this PM costs without NICFS's log and without a kernel: not a model of Ext4-DAX (see
//! [`crate::kernel`] for that).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use nicfs_layout::{BLOCK_SIZE, FormatConfig, Ino, Inode, ROOT_INO, mode};
use nicfs_pm::{FastPm, MappedFile, PmAddr, SharedPm};
use nicfs_store::{Engine, FsError, LineCache, Space, bmap, mkfs};
use sim::sync::Mutex as SimMutex;
use sim::{CoreSpec, Frequency, Sim, SimDuration, SimTime};

use crate::config::TimedConfig;
use crate::devices::Devices;
use crate::meter::{Agent, Llc, MeterPm};
use crate::study::{Access, Phase, PhaseResult, process_offsets};

/// The in-place file system with one file per process.
pub struct InPlaceMachine {
    cfg: TimedConfig,
    pm: Arc<MeterPm>,
    space: Space,
    eng: Rc<RefCell<Engine>>,
    files: Rc<RefCell<Vec<(Ino, Inode)>>>,
    file_bytes: u64,
}

fn e(e: FsError) -> String {
    e.to_string()
}

impl InPlaceMachine {
    /// Formats PM for `procs` files of up to `file_bytes` each. Untimed.
    pub fn new(cfg: &TimedConfig, procs: usize, file_bytes: u64) -> Result<InPlaceMachine, String> {
        let fmt = FormatConfig {
            size_bytes: (64 << 20) + procs as u64 * (file_bytes + file_bytes / 256),
            inodes: 1024,
            log_spaces: 1,
            log_headers: 64,
            log_data_bytes: 64 << 10,
            journal_blocks: 512,
        };
        let raw: SharedPm =
            Arc::new(FastPm::new(MappedFile::anonymous(fmt.size_bytes).map_err(|x| x.to_string())?));
        mkfs(raw.as_ref(), &fmt, 1).map_err(e)?;
        let pm = Arc::new(MeterPm::new(
            raw,
            Agent::Host,
            Arc::new(Mutex::new(Llc::new(cfg.pm.llc_lines as usize))),
        ));
        let shared: SharedPm = pm.clone();
        let space = Space::open(shared).map_err(e)?;
        let mut eng = Engine::new(space.clone(), Arc::new(LineCache::new(0))).map_err(e)?;
        let mut files = Vec::new();
        for p in 0..procs {
            let ino = eng.alloc_mut().reserve_inode().map_err(e)?;
            let mut t = eng.begin();
            t.op_create(ROOT_INO, ino, mode::S_IFREG | 0o644, 0, 0, 0, format!("f{p}").as_bytes(), b"", 0)
                .map_err(e)?;
            let inode = t.get_inode(ino).map_err(e)?;
            t.commit().map_err(e)?;
            files.push((ino, inode));
        }
        pm.take();
        Ok(InPlaceMachine {
            cfg: cfg.clone(),
            pm,
            space,
            eng: Rc::new(RefCell::new(eng)),
            files: Rc::new(RefCell::new(files)),
            file_bytes,
        })
    }

    /// Runs `phase` on every process at once.
    pub fn run(&self, phase: &Phase, seed: u64) -> Result<PhaseResult, String> {
        let sim = Sim::new(seed);
        let cx = sim.cx();
        let dev = Rc::new(Devices::new(&self.cfg));
        let lock = Rc::new(SimMutex::new(&cx, "engine", ()));
        let failure: Rc<RefCell<Option<String>>> = Rc::default();
        let procs = self.files.borrow().len();
        let ends: Rc<RefCell<Vec<SimDuration>>> = Rc::default();
        for p in 0..procs {
            let core =
                sim.add_core(CoreSpec::new(format!("host {p}"), Frequency::mhz(self.cfg.host.clock_mhz)));
            let offs = process_offsets(phase, self.file_bytes, seed, p);
            let (cx2, dev, lock, failure, ends) =
                (cx.clone(), dev.clone(), lock.clone(), failure.clone(), ends.clone());
            let (pm, space, eng, files) =
                (self.pm.clone(), self.space.clone(), self.eng.clone(), self.files.clone());
            let (phase, cycles) = (phase.clone(), self.cfg.cpu.inplace_op);
            cx.spawn(core, format!("process {p}"), async move {
                let mut buf = vec![p as u8 + 1; phase.size];
                for off in offs {
                    let r = match phase.access {
                        Access::Read => read(&space, &files.borrow()[p].1, off, &mut buf).map(|_| false),
                        Access::Write => write(&space, &eng, &mut files.borrow_mut()[p], off, &buf),
                    };
                    match r {
                        // A transaction commits under the engine lock.
                        Ok(true) => {
                            let _g = lock.lock().await;
                            dev.host(&cx2, cycles, &pm.take()).await;
                        }
                        Ok(false) => dev.host(&cx2, cycles, &pm.take()).await,
                        Err(x) => {
                            failure.borrow_mut().get_or_insert(x);
                            return;
                        }
                    }
                }
                ends.borrow_mut().push(cx2.now().saturating_since(SimTime::ZERO));
            });
        }
        sim.run().map_err(|d| d.to_string())?;
        if let Some(x) = failure.borrow_mut().take() {
            return Err(x);
        }
        let elapsed = ends.borrow().iter().copied().max().unwrap_or(SimDuration::ZERO);
        let ops = phase.ops * procs as u64;
        Ok(PhaseResult::new(elapsed, ops, ops * phase.size as u64, &sim, &dev))
    }
}

fn read(space: &Space, inode: &Inode, off: u64, buf: &mut [u8]) -> Result<(), String> {
    let end = (off + buf.len() as u64).min(inode.size);
    let mut pos = off;
    while pos < end {
        let n = (BLOCK_SIZE - pos % BLOCK_SIZE).min(end - pos);
        let dst = &mut buf[(pos - off) as usize..(pos - off + n) as usize];
        match bmap(space, inode, pos / BLOCK_SIZE).map_err(e)? {
            Some(b) => space.pm().read(PmAddr(b.byte_offset() + pos % BLOCK_SIZE), dst),
            None => dst.fill(0),
        }
        pos += n;
    }
    Ok(())
}

/// Writes in place; returns whether it committed a transaction.
fn write(
    space: &Space,
    eng: &RefCell<Engine>,
    file: &mut (Ino, Inode),
    off: u64,
    data: &[u8],
) -> Result<bool, String> {
    let (ino, ref mut cached) = *file;
    let end = off + data.len() as u64;
    let pm = space.pm();
    let mut mapped = end <= cached.size;
    let mut fb = off / BLOCK_SIZE;
    while mapped && fb * BLOCK_SIZE < end {
        mapped = bmap(space, cached, fb).map_err(e)?.is_some();
        fb += 1;
    }
    if mapped {
        let mut pos = off;
        while pos < end {
            let b = bmap(space, cached, pos / BLOCK_SIZE).map_err(e)?.ok_or("unmapped")?;
            let n = (BLOCK_SIZE - pos % BLOCK_SIZE).min(end - pos);
            let at = PmAddr(b.byte_offset() + pos % BLOCK_SIZE);
            pm.store(at, &data[(pos - off) as usize..(pos - off + n) as usize]);
            pm.flush(at, n);
            pos += n;
        }
        pm.fence();
        return Ok(false);
    }
    let mut eng = eng.borrow_mut();
    let mut t = eng.begin();
    let mut inode = t.get_inode(ino).map_err(e)?;
    let mut src = 0usize;
    for c in t.map_write(&mut inode, off, data.len() as u64).map_err(e)? {
        pm.store(c.dst, &data[src..src + c.len as usize]);
        pm.flush(c.dst, c.len);
        src += c.len as usize;
    }
    inode.size = inode.size.max(end);
    t.put_inode(ino, &inode);
    t.commit().map_err(e)?;
    *cached = inode;
    Ok(true)
}
