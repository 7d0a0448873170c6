//! The back end's control thread: serves the comm rings (hello, leases, inode grants,
//! drain requests, goodbye) and reaps slots of dead front ends.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use nicfs_comm::{LeaseMode, Msg, MsgKind, mono_ns, pid_alive};

use crate::leases::Decision;
use crate::shared::Shared;

/// A request that cannot be answered yet.
enum Pending {
    /// Reply once the head reaches `target`.
    Drained { slot: usize, id: u32, target: u64, kind: MsgKind },
    /// A lease waiting for revoked holders.
    Lease {
        slot: usize,
        id: u32,
        ino: u64,
        mode: LeaseMode,
        idx: usize,
        writer: Option<usize>,
        /// (revoked writer's tail, writer generation when it was read).
        target: Option<(u64, u64)>,
        since: u64,
    },
}

fn reply(sh: &Shared, slot: usize, m: Msg) {
    let ring = &sh.comm.slot(slot).resp;
    for _ in 0..100_000 {
        if ring.push(&m) {
            return;
        }
        std::thread::yield_now();
    }
    eprintln!("nicfs-backend: reply ring of slot {slot} stays full; dropping a reply");
}

fn err(sh: &Shared, slot: usize, id: u32, errno: u64) {
    reply(sh, slot, Msg::new(MsgKind::Err, id, &[errno]));
}

pub(crate) fn alloc_inodes(sh: &Shared, n: u64) -> Vec<u64> {
    let mut eng = sh.engine();
    (0..n.min(6)).map_while(|_| eng.alloc_mut().reserve_inode().ok().map(|i| i.0 as u64)).collect()
}

fn handle(sh: &Shared, slot: usize, m: Msg, pend: &mut Vec<Pending>) {
    match m.kind {
        MsgKind::Hello | MsgKind::Drain => {
            let target = if m.kind == MsgKind::Hello { sh.tail(slot) } else { m.args[0].saturating_add(1) };
            pend.push(Pending::Drained { slot, id: m.id, target, kind: m.kind });
        }
        MsgKind::LeaseReq => {
            let Some(mode) = LeaseMode::from_code(m.args[1]) else { return err(sh, slot, m.id, 22) };
            let ino = m.args[0];
            match sh.decide(slot, ino, mode) {
                Decision::Grant(idx, exp) => {
                    reply(sh, slot, Msg::new(MsgKind::Lease, m.id, &[idx as u64, exp]))
                }
                Decision::Wait { idx, writer } => pend.push(Pending::Lease {
                    slot,
                    id: m.id,
                    ino,
                    mode,
                    idx,
                    writer,
                    target: None,
                    since: mono_ns(),
                }),
                Decision::Full => err(sh, slot, m.id, 28),
            }
        }
        MsgKind::AllocInodes => {
            let inos = alloc_inodes(sh, m.args[0]);
            let mut args = vec![inos.len() as u64];
            args.extend(inos);
            reply(sh, slot, Msg::new(MsgKind::Inodes, m.id, &args));
        }
        MsgKind::Goodbye => {
            sh.return_quota(slot);
            reply(sh, slot, Msg::new(MsgKind::Ok, m.id, &[]));
        }
        MsgKind::Reserve => match sh.grant_blocks(slot, m.args[0], m.args[1]) {
            Ok(n) => reply(sh, slot, Msg::new(MsgKind::Ok, m.id, &[n])),
            Err(_) => err(sh, slot, m.id, 28),
        },
        _ => err(sh, slot, m.id, 22),
    }
}

/// Returns true when the pending request was answered.
fn poll(sh: &Shared, p: &mut Pending) -> bool {
    match p {
        Pending::Drained { slot, id, target, kind } => {
            if sh.is_quarantined(*slot) {
                err(sh, *slot, *id, 5);
                return true;
            }
            if sh.head(*slot) >= *target {
                if *kind == MsgKind::Hello {
                    // The previous owner's records are applied: its grants can go.
                    sh.clear_leases(*slot);
                }
                reply(sh, *slot, Msg::new(MsgKind::Ok, *id, &[]));
                return true;
            }
            false
        }
        Pending::Lease { slot, id, ino, mode, idx, writer, target, since } => {
            // Revoked holders cannot start new operations, so the in-flight ones drain. A
            // read request only waits for write operations (other readers keep their grants).
            // After 30 s a holder is presumed dead.
            let waited = mono_ns() - *since;
            let e = sh.comm.leases().entry(*idx).expect("index from table");
            let busy = match mode {
                LeaseMode::Read => e.active_writes() > 0,
                LeaseMode::Write => e.active() > 0,
            };
            let writer_dead = writer.is_some_and(|w| {
                let owner = sh.comm.slot(w).owner.load(Ordering::Acquire);
                owner == 0 || !pid_alive(owner)
            });
            if busy && waited < 30_000_000_000 && !writer_dead {
                return false;
            }
            if let Some(w) = *writer {
                // The drain target belongs to one revocation episode: if the writer word
                // changed since it was read (re-granted, revoked again), read it again.
                let generation = e.generation();
                match *target {
                    Some((t, g)) if g == generation => {
                        if sh.head(w) < t && !sh.is_quarantined(w) {
                            return false;
                        }
                        sh.finish_revocation(*idx, *ino, w);
                    }
                    _ => {
                        *target = Some((sh.tail(w), generation));
                        return false;
                    }
                }
            }
            match sh.decide(*slot, *ino, *mode) {
                Decision::Grant(i, exp) => {
                    reply(sh, *slot, Msg::new(MsgKind::Lease, *id, &[i as u64, exp]));
                    true
                }
                Decision::Wait { idx: i, writer: w } => {
                    *idx = i;
                    *writer = w;
                    *target = None;
                    false
                }
                Decision::Full => {
                    err(sh, *slot, *id, 28);
                    true
                }
            }
        }
    }
}

fn reap(sh: &Shared) {
    for slot in 0..sh.logs.len() {
        let s = sh.comm.slot(slot);
        let owner = s.owner.load(Ordering::Acquire);
        if owner != 0 && !pid_alive(owner) && sh.head(slot) >= sh.tail(slot) {
            sh.clear_leases(slot);
            sh.return_quota(slot);
            while s.req.pop().is_some() {}
            let _ = s.owner.compare_exchange(owner, 0, Ordering::AcqRel, Ordering::Acquire);
        }
    }
}

/// The control loop; returns when `stop` is set.
pub(crate) fn control_loop(sh: Arc<Shared>) {
    let mut pend: Vec<Pending> = Vec::new();
    let mut last_reap = 0u64;
    while !sh.stop.load(Ordering::Acquire) {
        let now = mono_ns();
        sh.comm.heartbeat().store(now, Ordering::Release);
        let mut busy = false;
        for slot in 0..sh.logs.len() {
            while let Some(m) = sh.comm.slot(slot).req.pop() {
                busy = true;
                if let Some(m) = m {
                    handle(&sh, slot, m, &mut pend);
                }
            }
        }
        pend.retain_mut(|p| !poll(&sh, p));
        if now - last_reap > 100_000_000 {
            reap(&sh);
            last_reap = now;
        }
        if !busy {
            let us = if pend.is_empty() { sh.cfg.poll_idle_us.min(200) } else { 10 };
            std::thread::sleep(Duration::from_micros(us));
        }
    }
}
