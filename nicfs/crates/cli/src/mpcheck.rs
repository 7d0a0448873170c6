//! The multi-process checker: several front-end processes, each with its own log, on
//! separate files (`private`), on their own regions of one shared file (`shared`), or all
//! writing the same blocks of one shared file (`overlap`), through leases; it checks that no
//! read is stale or torn.
//!
//! Every written block carries a stamp: writer id, block index, version, and a checksum over
//! the whole block. Around each write the writer takes two tickets from a global counter (one
//! before the call, one after it returns) and publishes the version and both tickets in a
//! shared "acknowledged" array (outside the file system). A reader snapshots the array for
//! the block, then reads it:
//!
//! * a checksum or stamp mismatch is a **torn** read;
//! * a block holding writer `w`'s version `v` while `w` had acknowledged a newer version
//!   before the read began is **stale** (a process's writes are ordered);
//! * a block holding `w`'s acknowledged version `v` while another writer's write *started*
//!   after `v` was acknowledged and was itself acknowledged before the read began is **stale**
//!   (that write came later, and ended before the read);
//! * zeroes where some write was acknowledged are **stale**.
//!
//! Only orders the tickets prove are checked, so the check has no false alarms; with
//! `overlap`, several writers race on every block and the lease hand-over between front
//! ends is what keeps reads fresh.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nicfs_frontend::{Fs, OpenFlags};
use nicfs_pm::MappedFile;
use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// Blocks per writer region.
pub const BLOCKS: u64 = 8;
const BS: usize = 4096;
/// Most workers the acknowledged array has room for.
pub const MAX_WORKERS: u64 = 64;
/// Words per (worker, block) record: sequence (odd while changing), version, start, ack.
const REC: usize = 4;
const ARRAY_BYTES: u64 = (8 + MAX_WORKERS * BLOCKS * REC as u64 * 8).div_ceil(4096) * 4096;

/// Which file layout the workers use.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Worker `i` writes and reads only `/w{i}`.
    Private,
    /// All workers write their own region of `/shared` and read every region.
    Shared,
    /// All workers write and read the same blocks of `/shared`.
    Overlap,
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

/// One acknowledged write, as published: version and its two tickets.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Acked {
    version: u64,
    start: u64,
    ack: u64,
}

/// The shared acknowledged-write array (a small file beside the PM file): a global ticket
/// counter, then one seqlocked record per (worker, block).
pub struct AckArray {
    map: MappedFile,
}

impl AckArray {
    /// Creates or opens the array at `path` (64 workers x BLOCKS records).
    pub fn open(path: &Path, create: bool) -> std::io::Result<AckArray> {
        let map = if create { MappedFile::create(path, ARRAY_BYTES) } else { MappedFile::open(path) };
        map.map(|map| AckArray { map }).map_err(std::io::Error::other)
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        assert!(i < ARRAY_BYTES as usize / 8);
        // SAFETY: in bounds (checked above) of a page-aligned map that outlives `self`, and
        // only ever accessed through atomics.
        unsafe { AtomicU64::from_ptr(self.map.base().cast::<u64>().add(i)) }
    }

    fn ticket(&self) -> u64 {
        self.word(0).fetch_add(1, Ordering::SeqCst)
    }

    fn rec(&self, worker: u64, block: u64) -> usize {
        1 + ((worker % MAX_WORKERS) * BLOCKS + block % BLOCKS) as usize * REC
    }

    /// Publishes `a` for (worker, block); only that worker writes its records.
    fn publish(&self, worker: u64, block: u64, a: Acked) {
        let r = self.rec(worker, block);
        self.word(r).fetch_add(1, Ordering::SeqCst);
        self.word(r + 1).store(a.version, Ordering::SeqCst);
        self.word(r + 2).store(a.start, Ordering::SeqCst);
        self.word(r + 3).store(a.ack, Ordering::SeqCst);
        self.word(r).fetch_add(1, Ordering::SeqCst);
    }

    /// The latest acknowledged write of (worker, block), read consistently.
    fn load(&self, worker: u64, block: u64) -> Acked {
        let r = self.rec(worker, block);
        loop {
            let s = self.word(r).load(Ordering::SeqCst);
            let a = Acked {
                version: self.word(r + 1).load(Ordering::SeqCst),
                start: self.word(r + 2).load(Ordering::SeqCst),
                ack: self.word(r + 3).load(Ordering::SeqCst),
            };
            if s.is_multiple_of(2) && self.word(r).load(Ordering::SeqCst) == s {
                return a;
            }
            std::hint::spin_loop();
        }
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

/// Judges a read of block `blk` that returned `got` (None: zeroes), given the snapshot taken
/// before the read of every writer of the block: `Err` describes a stale read.
fn judge(blk: u64, got: Option<(u64, u64)>, snap: &[(u64, Acked)]) -> Result<(), String> {
    let Some((w, v)) = got else {
        return match snap.iter().find(|(_, a)| a.version > 0) {
            Some((u, a)) => Err(format!("block {blk}: read zeroes, worker {u} acknowledged v{}", a.version)),
            None => Ok(()),
        };
    };
    let Some(mine) = snap.iter().find(|(u, _)| *u == w).map(|(_, a)| *a) else { return Ok(()) };
    if v < mine.version {
        return Err(format!("block {blk}: read worker {w}'s v{v}, it acknowledged v{}", mine.version));
    }
    if v == mine.version
        && let Some((u, a)) = snap.iter().find(|(u, a)| *u != w && a.version > 0 && a.start > mine.ack)
    {
        return Err(format!(
            "block {blk}: read worker {w}'s v{v} (acknowledged at ticket {}), but worker {u}'s v{} started after it (ticket {}) and was acknowledged before the read",
            mine.ack, a.version, a.start
        ));
    }
    Ok(())
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
        Mode::Shared | Mode::Overlap => "/shared".to_string(),
    };
    let fd = match fs.open(&path, OpenFlags::CREATE, 0o644) {
        Ok(fd) => fd,
        Err(e) => {
            rep.errors += 1;
            rep.first_problem = Some(format!("open {path}: {e}"));
            return rep;
        }
    };
    // Where (writer, block) lives in the file, and who writes a block a reader picks.
    let offset = |w: u64, blk: u64| match mode {
        Mode::Private | Mode::Overlap => blk * BS as u64,
        Mode::Shared => (w * BLOCKS + blk) * BS as u64,
    };
    let writers: Vec<u64> = match mode {
        Mode::Private => vec![id],
        Mode::Shared | Mode::Overlap => (0..workers).collect(),
    };
    let note = |rep: &mut WorkerReport, msg: String| {
        if rep.first_problem.is_none() {
            rep.first_problem = Some(msg);
        }
    };
    let mut version = 0u64;
    for _ in 0..ops {
        let blk = rng.below(BLOCKS);
        if rng.below(2) == 0 {
            version += 1;
            let data = stamp(id, blk, version);
            let start = acks.ticket();
            match fs.pwrite(fd, &data, offset(id, blk)) {
                Ok(_) => {
                    acks.publish(id, blk, Acked { version, start, ack: acks.ticket() });
                    rep.writes += 1;
                }
                Err(e) => {
                    rep.errors += 1;
                    note(&mut rep, format!("write: {e}"));
                }
            }
            continue;
        }
        // In `shared` mode a reader picks whose region to read; the block has that one writer.
        let owner = if mode == Mode::Shared { rng.below(workers) } else { id };
        let of_block: Vec<u64> = if mode == Mode::Shared { vec![owner] } else { writers.clone() };
        let snap: Vec<(u64, Acked)> = of_block.iter().map(|&u| (u, acks.load(u, blk))).collect();
        let mut buf = vec![0u8; BS];
        match fs.pread(fd, &mut buf, offset(owner, blk)) {
            Ok(n) => {
                rep.reads += 1;
                let got = if buf.iter().all(|&b| b == 0) || n < BS {
                    None
                } else {
                    match parse(&buf) {
                        Some((w, b, v)) if b == blk && of_block.contains(&w) => Some((w, v)),
                        other => {
                            rep.torn += 1;
                            note(&mut rep, format!("block {blk} of {owner}: torn or misplaced ({other:?})"));
                            continue;
                        }
                    }
                };
                if let Err(msg) = judge(blk, got, &snap) {
                    rep.stale += 1;
                    note(&mut rep, msg);
                }
            }
            Err(e) => {
                rep.errors += 1;
                note(&mut rep, format!("read: {e}"));
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

    #[test]
    fn judge_flags_only_orders_the_tickets_prove() {
        let a = |version, start, ack| Acked { version, start, ack };
        // Worker 1's v2 was acknowledged at 10; worker 2's v1 started at 11, acknowledged at 12.
        let snap = [(1, a(2, 9, 10)), (2, a(1, 11, 12))];
        assert!(judge(0, Some((1, 2)), &snap).is_err(), "worker 2's write came later and ended");
        assert!(judge(0, Some((1, 1)), &snap).is_err(), "worker 1 itself wrote v2 since");
        assert!(judge(0, None, &snap).is_err());
        judge(0, Some((2, 1)), &snap).unwrap();
        judge(0, Some((1, 3)), &snap).unwrap(); // newer than the snapshot: in flight
        // Overlapping in time (2 started before 1 was acknowledged): either may be last.
        let snap = [(1, a(2, 9, 12)), (2, a(1, 11, 13))];
        judge(0, Some((1, 2)), &snap).unwrap();
        judge(0, Some((2, 1)), &snap).unwrap();
        judge(0, None, &[(1, Acked::default())]).unwrap();
    }
}
