//! `nicfs fsck`: check an image and, with `--repair`, make it mount again.
//!
//! Exit status (as e2fsck's): 0 no problem found; 1 problems found and all repaired; 4
//! problems left (found without `--repair`, or beyond repair); 8 the check could not run (image
//! in use, or for `--repair` mounted by a front end; unreadable; both superblocks bad).
//!
//! Repair order matters: superblocks, then the journal, then the logs (cut at their last valid
//! record), then the tree (corrupt entries and inodes dropped, link counts and parents set,
//! stray blocks unmapped), then both bitmaps rebuilt from what is reachable, and only then are
//! the logs replayed, so that replay allocates from a bitmap that tells the truth.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use nicfs::mount::{ImageLock, open_pm};
use nicfs_backend::BackendConfig;
use nicfs_comm::CommRegion;
use nicfs_layout::{BLOCK_SIZE, JournalHeader};
use nicfs_pm::PmAddr;
use nicfs_pm::{FastPm, MappedFile, SharedPm};
use nicfs_store::{Space, check_log, fsck, repair, repair_log, replay_journal, reset_journal};

/// Most problem lines printed per round.
const SHOW: usize = 50;

/// Runs the check; returns the exit status.
pub(crate) fn run(pm: &Path, repair: bool) -> i32 {
    match check(pm, repair) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("nicfs fsck: {e:#}");
            8
        }
    }
}

fn show(problems: &[String]) {
    for p in problems.iter().take(SHOW) {
        println!("  {p}");
    }
    if problems.len() > SHOW {
        println!("  ... and {} more", problems.len() - SHOW);
    }
}

/// Checks (and repairs) the logs; returns (problems, problems left).
fn logs(space: &Space, fix: bool) -> Result<(usize, usize)> {
    let (mut found, mut left) = (0, 0);
    for i in 0..space.geo_ref().log_spaces {
        let c = check_log(space, i);
        if c.pending > 0 {
            println!("log {i}: {} valid records not yet applied (replayed at mount)", c.pending);
        }
        found += c.problems.len();
        for p in &c.problems {
            println!("  {p}");
        }
        match (&c.fix, fix) {
            (Some(f), true) => {
                repair_log(space, i, f)?;
                if f.rewrite_static {
                    println!("  repaired: log {i} super block rewritten");
                }
                if f.dropped > 0 {
                    println!("  repaired: log {i} cut at record {} ({} records dropped)", f.tail, f.dropped);
                }
                println!("  repaired: log {i} head {} and tail {} rewritten", f.head, f.tail);
            }
            (Some(_), false) => left += c.problems.len(),
            (None, _) => {}
        }
    }
    Ok((found, left))
}

fn check(pm: &Path, fix: bool) -> Result<i32> {
    // Repairs rewrite the image under a mounted front end: refuse as mkfs does.
    let _lock = if fix { ImageLock::rewrite(pm, false)? } else { ImageLock::owner(pm, false)? };
    // Without --repair the image is checked through a private view, in which the journal is
    // replayed as recovery would, so the check sees what a mount would start from.
    let host: SharedPm =
        if fix { open_pm(pm, None)? } else { Arc::new(FastPm::new(MappedFile::open_private(pm)?)) };
    let (space, sb) = Space::open_checked(host.clone()).context("no usable superblock")?;
    let geo = *space.geo_ref();
    let (mut found, mut left) = (0usize, 0usize);
    if let Some(e) = &sb.primary {
        println!("primary superblock unusable ({e}): using the backup");
    }
    if let Some(e) = &sb.backup {
        println!("backup superblock unusable ({e})");
    }
    if !sb.is_clean() {
        found += 1;
        if fix {
            space.rewrite_superblocks();
            println!("  repaired: both superblocks rewritten");
        } else {
            left += 1;
        }
    }
    let mut jh = [0u8; 28];
    host.read(PmAddr(geo.journal_start as u64 * BLOCK_SIZE), &mut jh);
    match JournalHeader::decode(&jh, geo.journal_blocks) {
        Err(e) => {
            found += 1;
            println!("  journal header: {e}");
            if fix {
                reset_journal(host.as_ref(), &geo);
                println!("  repaired: journal emptied (its transaction, if any, is lost)");
            } else {
                left += 1;
            }
        }
        Ok(h) if h.committed => {
            let j = replay_journal(host.as_ref(), &geo)?;
            if fix {
                // Applied for good: empty it, or a later mount would re-apply it over repairs.
                reset_journal(host.as_ref(), &geo);
            }
            println!(
                "journal: committed transaction of {} records re-applied{}",
                j.records,
                if fix { "" } else { " (in memory: the check sees the image as a mount would)" }
            );
        }
        Ok(_) => {}
    }
    let (f, l) = logs(&space, fix)?;
    found += f;
    left += l;
    let mut r = fsck(&space);
    found += r.problems.len();
    show(&r.problems);
    if fix && !r.is_clean() {
        for _round in 0..4 {
            if r.is_clean() || r.fixes.is_empty() {
                break;
            }
            let n = repair(&space, &r.fixes)?;
            println!("  repaired: {n} fixes applied");
            r = fsck(&space);
            show(&r.problems);
        }
    }
    if fix {
        let comm = Arc::new(CommRegion::anonymous()?);
        let (_sh, rep) = nicfs_backend::open(host.clone(), comm, BackendConfig::free())?;
        println!(
            "recovery: replayed batches per log {:?}, records rejected {}{}",
            rep.batches,
            rep.rejected,
            if rep.rejected > 0 { " (they named what the repair removed)" } else { "" }
        );
        for e in &rep.errors {
            println!("  {e}");
        }
        r = fsck(&space);
        show(&r.problems);
        left = r.problems.len() + rep.errors.len();
    } else {
        left += r.problems.len();
    }
    println!(
        "fsck: {} inodes, {} directories, {} blocks in use; {found} problems found{}",
        r.inodes,
        r.dirs,
        r.blocks,
        if fix { format!(", {left} left") } else { String::new() }
    );
    Ok(match (found, left) {
        (0, 0) => 0,
        (_, 0) if fix => 1,
        _ => {
            if !fix {
                println!("run `nicfs fsck --repair` to repair");
            }
            4
        }
    })
}
