//! The multi-process checker: several front-end processes, each with its own log, on
//! separate files (`private`) or on one shared file through leases (`shared`), checking that
//! no read is stale or torn.
//!
//! Every written block carries a stamp: writer id, block index, version, and a checksum over
//! the whole block. After a write returns, the writer publishes the version in a shared
//! "acknowledged" array (outside the file system). A reader first reads the acknowledged
//! version `a` of a block, then the block: a checksum or stamp mismatch is a **torn** read;
//! a version below `a` is a **stale** read.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nicfs_frontend::{Fs, OpenFlags};
use nicfs_pm::MappedFile;
use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// Blocks per writer region.
pub const BLOCKS: u64 = 8;
const BS: usize = 4096;

/// Which file layout the workers use.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Worker `i` writes and reads only `/w{i}`.
    Private,
    /// All workers write their own region of `/shared` and read every region.
    Shared,
}

/// One worker's result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerReport {
    /// Reads checked.
    pub reads: u64,
    /// Writes done.
    pub writes: u64,
    /// Reads that returned an older version than acknowledged.
    pub stale: u64,
    /// Reads whose block was not one complete write.
    pub torn: u64,
    /// Operations that failed.
    pub errors: u64,
    /// First problem, if any.
    pub first_problem: Option<String>,
}

/// The shared acknowledged-version array (a small file beside the PM file).
pub struct AckArray {
    map: MappedFile,
}

impl AckArray {
    /// Creates or opens the array at `path` (64 workers x BLOCKS slots).
    pub fn open(path: &Path, create: bool) -> std::io::Result<AckArray> {
        let map = if create { MappedFile::create(path, 4096) } else { MappedFile::open(path) };
        map.map(|map| AckArray { map }).map_err(std::io::Error::other)
    }

    fn slot(&self, worker: u64, block: u64) -> &AtomicU64 {
        let i = ((worker % 64) * BLOCKS + block % BLOCKS) as usize;
        // SAFETY: 4096 bytes hold 512 slots; i < 64 * 8 = 512; the map outlives `self`.
        unsafe { AtomicU64::from_ptr(self.map.base().cast::<u64>().add(i)) }
    }
}

fn stamp(worker: u64, block: u64, version: u64) -> Vec<u8> {
    let mut b = vec![0u8; BS];
    b[0..8].copy_from_slice(&worker.to_le_bytes());
    b[8..16].copy_from_slice(&block.to_le_bytes());
    b[16..24].copy_from_slice(&version.to_le_bytes());
    let mut r = Rng::new(worker << 40 ^ block << 20 ^ version);
    for x in b[28..].iter_mut() {
        *x = r.next_u64() as u8;
    }
    let crc = nicfs_layout::crc32(&b[28..]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Parses a stamped block: (worker, block, version), or `None` if torn.
fn parse(b: &[u8]) -> Option<(u64, u64, u64)> {
    let g = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(b[24..28].try_into().expect("4 bytes"));
    if crc != nicfs_layout::crc32(&b[28..]) {
        return None;
    }
    let (w, k, v) = (g(0), g(8), g(16));
    (stamp(w, k, v) == b).then_some((w, k, v))
}

/// Runs one worker: `ops` operations, seeded by `seed`.
pub fn run_worker(
    fs: &Fs,
    acks: &AckArray,
    id: u64,
    workers: u64,
    mode: Mode,
    ops: u64,
    seed: u64,
) -> WorkerReport {
    let mut rep = WorkerReport::default();
    let mut rng = Rng::new(seed ^ id.wrapping_mul(0x9E37));
    let path = match mode {
        Mode::Private => format!("/w{id}"),
        Mode::Shared => "/shared".to_string(),
    };
    let fd = match fs.open(&path, OpenFlags::CREATE, 0o644) {
        Ok(fd) => fd,
        Err(e) => {
            rep.errors += 1;
            rep.first_problem = Some(format!("open {path}: {e}"));
            return rep;
        }
    };
    let region = |w: u64| match mode {
        Mode::Private => 0,
        Mode::Shared => w * BLOCKS,
    };
    let note = |rep: &mut WorkerReport, msg: String| {
        if rep.first_problem.is_none() {
            rep.first_problem = Some(msg);
        }
    };
    let mut version = 0u64;
    for _ in 0..ops {
        if rng.below(2) == 0 {
            let blk = rng.below(BLOCKS);
            version += 1;
            let data = stamp(id, blk, version);
            match fs.pwrite(fd, &data, (region(id) + blk) * BS as u64) {
                Ok(_) => {
                    acks.slot(id, blk).store(version, Ordering::SeqCst);
                    rep.writes += 1;
                }
                Err(e) => {
                    rep.errors += 1;
                    note(&mut rep, format!("write: {e}"));
                }
            }
        } else {
            let w = if mode == Mode::Shared { rng.below(workers) } else { id };
            let blk = rng.below(BLOCKS);
            let acked = acks.slot(w, blk).load(Ordering::SeqCst);
            let mut buf = vec![0u8; BS];
            match fs.pread(fd, &mut buf, (region(w) + blk) * BS as u64) {
                Ok(n) => {
                    rep.reads += 1;
                    if buf.iter().all(|&b| b == 0) || n < BS {
                        if acked > 0 {
                            rep.stale += 1;
                            note(
                                &mut rep,
                                format!("worker {w} block {blk}: read nothing, acknowledged v{acked}"),
                            );
                        }
                        continue;
                    }
                    match parse(&buf) {
                        None => {
                            rep.torn += 1;
                            note(&mut rep, format!("worker {w} block {blk}: torn block"));
                        }
                        Some((pw, pb, _)) if pw != w || pb != blk => {
                            rep.torn += 1;
                            note(&mut rep, format!("block of worker {w}/{blk} holds {pw}/{pb}"));
                        }
                        Some((_, _, v)) if v < acked => {
                            rep.stale += 1;
                            note(
                                &mut rep,
                                format!("worker {w} block {blk}: read v{v}, acknowledged v{acked}"),
                            );
                        }
                        Some(_) => {}
                    }
                }
                Err(e) => {
                    rep.errors += 1;
                    note(&mut rep, format!("read: {e}"));
                }
            }
        }
    }
    let _ = fs.close(fd);
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_parse_and_detect_tearing() {
        let s = stamp(3, 5, 9);
        assert_eq!(parse(&s), Some((3, 5, 9)));
        let mut torn = s.clone();
        torn[2000..].copy_from_slice(&stamp(3, 5, 10)[2000..]);
        assert_eq!(parse(&torn), None);
    }
}
