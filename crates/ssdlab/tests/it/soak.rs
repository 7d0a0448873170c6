//! The serving soak (issue 28): many NBD clients at once against one `ssdlab serve` on the
//! tiny device (GC in every second), each in its own slice of the export, for a fixed time.
//! Every client connects, runs a random number of pipelined requests of mixed sizes (4 KiB to
//! 256 KiB writes and reads, write-zeroes, trims, flushes), then disconnects cleanly or drops
//! the connection with requests in flight, and connects again. Each checks what it reads
//! against what it wrote. A dropped connection ends one of two ways, half and half: the client
//! shuts its sending side and reads every reply until the server closes (the server has then
//! carried out every request, so nothing of that connection can land later), or it closes the
//! socket outright. NBD orders nothing across connections, so a request of an outright-closed
//! connection may still be carried out after the next connection's writes: its blocks are left
//! alone for 5 s, and a read that later returns what such a request wrote counts as a late
//! landing (`late`, with the longest delay seen), not an error; any other stale read is an
//! error. The server's resident set is sampled every second; the test fails on
//! any error reply, any read of data the client did not write, any connection the server
//! dropped, a server that does not stop cleanly, or a resident set that grows in the second half
//! of a run of a minute or more (end more than 10% + 32 MiB above the middle).
//!
//! `SSDLAB_SOAK_CLIENTS` (default 8), `SSDLAB_SOAK_SECS` (default 3) and `SSDLAB_SOAK_SEED`
//! scale it; `scripts/robustness soak` runs 64 clients for an hour. The last line it prints
//! (`soak: ...`) has the figures.

use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use live::ListenAddr;
use live::proto::{CmdFlags, Command};
use rand::{RngExt, SeedableRng};
use sim::SimRng as StdRng;
use testkit::durability::read_stamp;

use crate::serve::client::RawClient;
use crate::serve::{BLOCK, Server, pattern};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What one block of a client's slice may read as.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// This version of the block's stamp (`None`: zeroes).
    Exact(Option<u64>),
    /// Trimmed: zeroes or the version before the trim.
    TrimmedFrom(Option<u64>),
    /// Written by a request dropped in flight: anything of this block's own, or zeroes.
    Unknown,
}

#[derive(Default)]
struct Counts {
    sessions: AtomicU64,
    abrupt: AtomicU64,
    requests: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    zeroes: AtomicU64,
    trims: AtomicU64,
    flushes: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
    /// Sessions that shut their sending side with requests in flight and read every reply.
    half_closed: AtomicU64,
    /// Reads that returned what a request of an outright-closed connection wrote, after a
    /// later write of the same block (a late landing, which NBD allows).
    late: AtomicU64,
    /// The longest time from an outright close to a read that saw its late landing, ms.
    late_ms: AtomicU64,
    messages: Mutex<Vec<String>>,
}

impl Counts {
    fn error(&self, what: String) {
        self.errors.fetch_add(1, Relaxed);
        let mut m = self.messages.lock().unwrap();
        if m.len() < 20 {
            m.push(what);
        }
    }
}

enum Pending {
    Read { first: u64, blocks: u64 },
    Write { first: u64, blocks: u64, expect: Expect },
    Other { first: u64, blocks: u64 },
}

/// How long the blocks of requests an outright-closed connection left in flight are left alone
/// (the server finishes them within milliseconds with `--timing none` on an idle machine; one
/// carried out later than this shows up as a late landing).
const QUARANTINE: Duration = Duration::from_secs(5);

/// What a block may also read as because a request of an outright-closed connection wrote it:
/// the version (`None`: zeroes, a write-zeroes or trim) and when the connection was closed.
type Late = Vec<(Option<u64>, Instant)>;

/// One client: sessions until `deadline`, in blocks `base..base + blocks` of the export.
fn client(addr: ListenAddr, id: u64, base: u64, blocks: u64, deadline: Instant, seed: u64, counts: &Counts) {
    let mut rng = StdRng::seed_from_u64(seed ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut expect = vec![Expect::Exact(None); blocks as usize];
    let mut busy = vec![false; blocks as usize];
    // Requests a dropped connection left in flight may still be carried out after the client's
    // next connection has written the same blocks (NBD orders nothing across connections), so
    // their blocks are left alone for a while.
    let mut quarantine: Vec<Option<Instant>> = vec![None; blocks as usize];
    let mut late: Vec<Late> = vec![Vec::new(); blocks as usize];
    let mut version = 0u64;
    while Instant::now() < deadline {
        let mut c = RawClient::open(&addr, "", rng.random_bool(0.5));
        counts.sessions.fetch_add(1, Relaxed);
        let ops = rng.random_range(1..=400u32);
        let depth = rng.random_range(1..=16usize);
        let abrupt = rng.random_bool(0.2);
        let mut pending: HashMap<u64, Pending> = HashMap::new();
        let mut alive = true;
        for _ in 0..ops {
            if Instant::now() >= deadline {
                break;
            }
            while alive && pending.len() >= depth {
                alive = reap(&mut c, id, base, &mut pending, &mut expect, &mut busy, &late, counts);
            }
            if !alive {
                break;
            }
            // Sizes 4 KiB to 256 KiB, as many small as large by powers of two.
            let n = (1u64 << rng.random_range(0..=6u32)).min(blocks);
            let n = rng.random_range(n.div_ceil(2)..=n);
            let first = rng.random_range(0..=blocks - n);
            let range = first as usize..(first + n) as usize;
            let r: f64 = rng.random();
            let now = Instant::now();
            if r >= 0.08
                && (busy[range.clone()].iter().any(|&b| b)
                    || quarantine[range.clone()].iter().any(|q| q.is_some_and(|q| q > now)))
            {
                continue;
            }
            let (off, len) = ((base + first) * BLOCK, (n * BLOCK) as u32);
            let fua = if rng.random_bool(0.1) { CmdFlags::FUA } else { CmdFlags::EMPTY };
            let (cookie, p) = if r < 0.08 {
                counts.flushes.fetch_add(1, Relaxed);
                (c.send(Command::Flush, CmdFlags::EMPTY, 0, 0, &[]), Pending::Other { first: 0, blocks: 0 })
            } else if r < 0.16 {
                counts.trims.fetch_add(1, Relaxed);
                (c.send(Command::Trim, CmdFlags::EMPTY, off, len, &[]), Pending::Other { first, blocks: n })
            } else if r < 0.22 {
                counts.zeroes.fetch_add(1, Relaxed);
                let p = Pending::Write { first, blocks: n, expect: Expect::Exact(None) };
                (c.send(Command::WriteZeroes, fua, off, len, &[]), p)
            } else if r < 0.6 {
                version += 1;
                counts.writes.fetch_add(1, Relaxed);
                counts.bytes.fetch_add(len as u64, Relaxed);
                let data = pattern(base + first, version, n);
                let p = Pending::Write { first, blocks: n, expect: Expect::Exact(Some(version)) };
                (c.send(Command::Write, fua, off, len, &data), p)
            } else {
                counts.reads.fetch_add(1, Relaxed);
                counts.bytes.fetch_add(len as u64, Relaxed);
                (c.send(Command::Read, CmdFlags::EMPTY, off, len, &[]), Pending::Read { first, blocks: n })
            };
            counts.requests.fetch_add(1, Relaxed);
            let (Pending::Read { first, blocks }
            | Pending::Write { first, blocks, .. }
            | Pending::Other { first, blocks }) = &p;
            busy[*first as usize..(*first + *blocks) as usize].fill(true);
            pending.insert(cookie, p);
        }
        if abrupt && alive && rng.random_bool(0.5) {
            // Gone with its requests in flight, but reading their replies: the server answers
            // every one before it closes, so once it has, none can land later.
            counts.abrupt.fetch_add(1, Relaxed);
            counts.half_closed.fetch_add(1, Relaxed);
            if let Err(e) = c.stream.shutdown(std::net::Shutdown::Write) {
                counts.error(format!("client {id}: shutting the sending side: {e}"));
            }
            while alive && !pending.is_empty() {
                alive = reap(&mut c, id, base, &mut pending, &mut expect, &mut busy, &late, counts);
            }
            let mut rest = Vec::new();
            if alive && (c.stream.read_to_end(&mut rest).is_err() || !rest.is_empty()) {
                counts.error(format!(
                    "client {id}: {} bytes after the last reply of a half-closed connection",
                    rest.len()
                ));
            }
        } else if abrupt && alive {
            counts.abrupt.fetch_add(1, Relaxed);
            let now = Instant::now();
            for p in pending.values() {
                let (first, n, landing) = match p {
                    Pending::Write { first, blocks, expect: Expect::Exact(v) } => (*first, *blocks, *v),
                    Pending::Other { first, blocks } => (*first, *blocks, None),
                    _ => continue,
                };
                for b in first..first + n {
                    expect[b as usize] = Expect::Unknown;
                    quarantine[b as usize] = Some(now + QUARANTINE);
                    late[b as usize].push((landing, now));
                }
            }
            drop(c); // gone with its requests in flight
        } else {
            while alive && !pending.is_empty() {
                alive = reap(&mut c, id, base, &mut pending, &mut expect, &mut busy, &late, counts);
            }
            if alive {
                c.send(Command::Disc, CmdFlags::EMPTY, 0, 0, &[]);
                let mut rest = Vec::new();
                if c.stream.read_to_end(&mut rest).is_err() || !rest.is_empty() {
                    counts.error(format!("client {id}: the server did not close cleanly after NBD_CMD_DISC"));
                }
            }
        }
        if !alive {
            // The server dropped a connection it should have kept: what was in flight is unknown.
            let until = Instant::now() + QUARANTINE;
            for p in pending.values() {
                if let Pending::Write { first, blocks, .. } | Pending::Other { first, blocks } = p {
                    for b in *first..*first + *blocks {
                        expect[b as usize] = Expect::Unknown;
                        quarantine[b as usize] = Some(until);
                    }
                }
            }
        }
        busy.fill(false);
    }
}

/// Receives one reply and checks it; false when the connection is gone (an error here).
#[allow(clippy::too_many_arguments)] // the client's per-block state, borrowed piecewise
fn reap(
    c: &mut RawClient,
    id: u64,
    base: u64,
    pending: &mut HashMap<u64, Pending>,
    expect: &mut [Expect],
    busy: &mut [bool],
    late: &[Late],
    counts: &Counts,
) -> bool {
    let reply = match c.recv() {
        Ok(r) => r,
        Err(e) => {
            counts.error(format!(
                "client {id}: connection lost with {} requests in flight: {e}",
                pending.len()
            ));
            return false;
        }
    };
    let Some(p) = pending.remove(&reply.cookie) else {
        counts.error(format!("client {id}: reply to cookie {} that is not in flight", reply.cookie));
        return false;
    };
    if reply.error != 0 {
        counts.error(format!("client {id}: error {} ({})", reply.error, reply.message));
    }
    match p {
        Pending::Read { first, blocks } => {
            busy[first as usize..(first + blocks) as usize].fill(false);
            if reply.error == 0 {
                for (i, data) in reply.data.chunks(BLOCK as usize).enumerate() {
                    let b = first + i as u64;
                    let got = read_stamp(data);
                    let ok = match (expect[b as usize], &got) {
                        (_, Err(_)) => false,
                        (Expect::Unknown, Ok(None)) => true,
                        (Expect::Unknown, Ok(Some((blk, _)))) => *blk == base + b,
                        (Expect::Exact(v), Ok(None)) => v.is_none(),
                        (Expect::TrimmedFrom(_), Ok(None)) => true,
                        (Expect::Exact(v) | Expect::TrimmedFrom(v), Ok(Some((blk, ver)))) => {
                            *blk == base + b && v == Some(*ver)
                        }
                    };
                    // What a request of an outright-closed connection wrote, landing late.
                    let landed = if ok {
                        None
                    } else {
                        let version = match &got {
                            Ok(None) => Some(None),
                            Ok(Some((blk, ver))) if *blk == base + b => Some(Some(*ver)),
                            _ => None,
                        };
                        version.and_then(|v| late[b as usize].iter().filter(|l| l.0 == v).map(|l| l.1).min())
                    };
                    if let Some(closed) = landed {
                        counts.late.fetch_add(1, Relaxed);
                        counts.late_ms.fetch_max(closed.elapsed().as_millis() as u64, Relaxed);
                    } else if !ok {
                        counts.error(format!(
                            "client {id}: block {} read {got:?}, expected {:?}",
                            base + b,
                            expect[b as usize]
                        ));
                    }
                }
                if reply.data.len() as u64 != blocks * BLOCK {
                    counts.error(format!(
                        "client {id}: read of {blocks} blocks returned {} bytes",
                        reply.data.len()
                    ));
                }
            }
        }
        Pending::Write { first, blocks, expect: e } => {
            let e = if reply.error == 0 { e } else { Expect::Unknown };
            for b in first..first + blocks {
                expect[b as usize] = e;
                busy[b as usize] = false;
            }
        }
        Pending::Other { first, blocks } => {
            for b in first..first + blocks {
                if let Expect::Exact(v) = expect[b as usize] {
                    expect[b as usize] = Expect::TrimmedFrom(v);
                }
                busy[b as usize] = false;
            }
        }
    }
    true
}

/// The server's resident set in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn many_clients_with_mixed_requests_and_disconnects_keep_data_and_memory_flat() {
    let clients: u64 = env_or("SSDLAB_SOAK_CLIENTS", 8);
    let secs: f64 = env_or("SSDLAB_SOAK_SECS", 3.0);
    let seed: u64 = env_or("SSDLAB_SOAK_SEED", 1);
    eprintln!("soak: {clients} clients for {secs} s, SSDLAB_SOAK_SEED={seed}");
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &dir.path().join("nand.img"), &["--timing", "none"]);
    let probe = RawClient::open(&server.addr(), "", false);
    let size = probe.size;
    probe.disconnect();
    let slice = size / BLOCK / clients;
    assert!(slice >= 64, "{clients} clients leave {slice} blocks each");
    let pid = server.pid();
    let start_rss = rss_kib(pid);
    let counts = Arc::new(Counts::default());
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let threads: Vec<_> = (0..clients)
        .map(|id| {
            let (addr, counts) = (server.addr(), counts.clone());
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || client(addr, id, id * slice, slice, deadline, seed, &counts))
                .unwrap()
        })
        .collect();
    // Resident set every second (and every tenth of a short run).
    let every = Duration::from_secs_f64((secs / 10.0).clamp(0.1, 1.0));
    let mut samples = vec![(0.0, start_rss)];
    while Instant::now() < deadline {
        std::thread::sleep(every.min(deadline.saturating_duration_since(Instant::now())));
        samples.push((started.elapsed().as_secs_f64(), rss_kib(pid)));
        if samples.len() % 60 == 0 {
            eprintln!(
                "soak: {:.0} s, {} requests, {} errors, RSS {} MiB",
                started.elapsed().as_secs_f64(),
                counts.requests.load(Relaxed),
                counts.errors.load(Relaxed),
                samples.last().unwrap().1 >> 10
            );
        }
    }
    let panicked = threads.into_iter().map(|t| t.join()).filter(Result::is_err).count();
    for _ in 0..panicked {
        counts.error("a client thread panicked (see above)".into());
    }
    let elapsed = started.elapsed().as_secs_f64();
    let end_rss = samples.last().unwrap().1;
    let middle_rss = samples
        .iter()
        .min_by(|a, b| (a.0 - secs / 2.0).abs().total_cmp(&(b.0 - secs / 2.0).abs()))
        .unwrap()
        .1;
    let max_rss = samples.iter().map(|s| s.1).max().unwrap();
    let (stdout, _) = server.stop();
    let served: u64 =
        stdout.split("live: ").nth(1).and_then(|s| s.split_whitespace().next()?.parse().ok()).unwrap_or(0);
    let c = &counts;
    let sessions = c.sessions.load(Relaxed);
    let figures = format!(
        "soak: {clients} clients, {elapsed:.1} s, {sessions} sessions ({} dropped with requests in flight, {} of them half-closed), {} requests ({} reads, {} writes, {} write-zeroes, {} trims, {} flushes), {:.1} GiB moved, {} errors, {} late landings (longest {} ms after the close); RSS start {} MiB, middle {} MiB, end {} MiB, max {} MiB",
        c.abrupt.load(Relaxed),
        c.half_closed.load(Relaxed),
        c.requests.load(Relaxed),
        c.reads.load(Relaxed),
        c.writes.load(Relaxed),
        c.zeroes.load(Relaxed),
        c.trims.load(Relaxed),
        c.flushes.load(Relaxed),
        c.bytes.load(Relaxed) as f64 / (1u64 << 30) as f64,
        c.errors.load(Relaxed),
        c.late.load(Relaxed),
        c.late_ms.load(Relaxed),
        start_rss >> 10,
        middle_rss >> 10,
        end_rss >> 10,
        max_rss >> 10,
    );
    eprintln!("{figures}");
    let messages = c.messages.lock().unwrap();
    assert!(messages.is_empty(), "{figures}\n{}", messages.join("\n"));
    // One more connection than the clients made: the size probe.
    assert_eq!(served, sessions + 1, "the server counted {served} connections: {stdout}");
    // A short run (the default, in `cargo test`) is still warming up the server's caches.
    if secs >= 60.0 {
        assert!(
            end_rss <= middle_rss + middle_rss / 10 + (32 << 10),
            "RSS grew in the second half: {figures}"
        );
    }
}
