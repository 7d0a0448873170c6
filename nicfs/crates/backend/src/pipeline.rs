//! The per-front-end pipeline: four stage threads joined by bounded channels, or (ablation)
//! one thread running the stages back to back.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::fetch::Batch;
use crate::locate::Located;
use crate::merge::Step;
use crate::shared::Shared;

fn idle(sh: &Shared, idle_polls: &mut u32) {
    *idle_polls += 1;
    let us = if *idle_polls > 50 { sh.cfg.poll_idle_us.max(1000) } else { sh.cfg.poll_idle_us };
    std::thread::sleep(Duration::from_micros(us));
}

/// Whether the log has an owner or unapplied records (only then is it worth polling).
fn active(sh: &Shared, slot: usize) -> bool {
    sh.comm.slot(slot).owner.load(Ordering::Acquire) != 0 || sh.head(slot) < sh.tail(slot)
}

fn fetch_loop(sh: Arc<Shared>, slot: usize, tx: SyncSender<Batch>) {
    let mut next = sh.head(slot);
    let mut idle_polls = 0;
    while !sh.stop.load(Ordering::Acquire) && !sh.is_quarantined(slot) {
        if !active(&sh, slot) {
            idle(&sh, &mut idle_polls);
            continue;
        }
        match sh.stage_fetch(slot, next, false) {
            Ok(Some(b)) => {
                idle_polls = 0;
                next = b.end;
                if tx.send(b).is_err() {
                    return;
                }
            }
            Ok(None) => idle(&sh, &mut idle_polls),
            Err(e) => sh.quarantine(slot, &e),
        }
    }
}

fn locate_loop(sh: Arc<Shared>, rx: Receiver<Batch>, tx: SyncSender<(Batch, Located)>) {
    for b in rx {
        let l = sh.stage_locate(&b);
        if tx.send((b, l)).is_err() {
            return;
        }
    }
}

fn merge_loop(sh: Arc<Shared>, rx: Receiver<(Batch, Located)>, tx: SyncSender<(Batch, Vec<Step>)>) {
    for (b, l) in rx {
        let s = sh.stage_merge(&b, &l);
        if tx.send((b, s)).is_err() {
            return;
        }
    }
}

fn patch_loop(sh: Arc<Shared>, slot: usize, rx: Receiver<(Batch, Vec<Step>)>) {
    for (b, s) in rx {
        if sh.is_quarantined(slot) {
            continue;
        }
        if let Err(e) = sh.stage_patch(&b, &s) {
            sh.quarantine(slot, &e);
        }
    }
}

fn serial_loop(sh: Arc<Shared>, slot: usize) {
    let mut idle_polls = 0;
    while !sh.stop.load(Ordering::Acquire) && !sh.is_quarantined(slot) {
        if !active(&sh, slot) {
            idle(&sh, &mut idle_polls);
            continue;
        }
        match sh.step_inline(slot, false) {
            Ok(true) => idle_polls = 0,
            Ok(false) => idle(&sh, &mut idle_polls),
            Err(_) => return,
        }
    }
}

/// Starts the threads for log `slot`.
pub(crate) fn spawn(sh: &Arc<Shared>, slot: usize) -> std::io::Result<Vec<JoinHandle<()>>> {
    let name = |s: &str| format!("nicfs-{s}-{slot}");
    let spawn = |n: String, f: Box<dyn FnOnce() + Send>| std::thread::Builder::new().name(n).spawn(f);
    if !sh.cfg.pipeline {
        let s = sh.clone();
        return Ok(vec![spawn(name("serial"), Box::new(move || serial_loop(s, slot)))?]);
    }
    let (t1, r1) = sync_channel(2);
    let (t2, r2) = sync_channel(2);
    let (t3, r3) = sync_channel(2);
    let (a, b, c, d) = (sh.clone(), sh.clone(), sh.clone(), sh.clone());
    Ok(vec![
        spawn(name("fetch"), Box::new(move || fetch_loop(a, slot, t1)))?,
        spawn(name("locate"), Box::new(move || locate_loop(b, r1, t2)))?,
        spawn(name("merge"), Box::new(move || merge_loop(c, r2, t3)))?,
        spawn(name("patch"), Box::new(move || patch_loop(d, slot, r3)))?,
    ])
}
