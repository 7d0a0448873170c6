//! The crash-consistency checker.
//!
//! For each seed: generate a bounded sequence of operations (create, overwrite, truncate,
//! unlink, mkdir, rmdir, rename), run it through the real front end(s) and back end on a
//! [`CrashPm`], and at **every fence** draw the post-crash images a power failure could
//! leave (pending lines all lost, all kept, random subsets of lines, and lines persisted in
//! part at 8-byte granularity). With two front ends, each operation runs on one of them
//! at random, each with its own log; they share files, so leases move between them. Each image is recovered by
//! the back end's mount-time recovery and read back; the result must equal the reference
//! model after the last acknowledged operation, or after the in-flight one (all or nothing).
//! Back-end drains happen at random points and under back-pressure, so crashes also hit the
//! middle of a patch. Recovery is also re-run on some images to check idempotence, and
//! every recovered image must pass fsck.

use std::sync::{Arc, Mutex};

use nicfs_backend::{BackendConfig, DirectLink, open};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs, OpenFlags};
use nicfs_layout::FormatConfig;
use nicfs_pm::{CrashPm, SharedPm};
use nicfs_store::{Space, fsck, mkfs};

use crate::model::{Node, Op, Tree, apply, read_tree};
use crate::rng::Rng;

/// Checker settings.
#[derive(Clone, Debug)]
pub struct CrashConfig {
    /// Operations per sequence.
    pub ops: usize,
    /// Random subsets drawn per fence (besides "none" and "all").
    pub subsets: usize,
    /// Percent chance of an explicit back-end drain after an operation.
    pub drain_pct: u64,
    /// Re-run recovery on every n-th image to check idempotence.
    pub idempotence_every: u64,
    /// Images per fence with pending lines persisted in part (8-byte words chosen
    /// independently).
    pub torn: usize,
    /// Front ends (1 or 2), each with its own log space.
    pub front_ends: usize,
}

impl Default for CrashConfig {
    fn default() -> Self {
        CrashConfig { ops: 14, subsets: 2, drain_pct: 30, idempotence_every: 7, torn: 2, front_ends: 1 }
    }
}

/// What the checker saw.
#[derive(Clone, Debug, Default)]
pub struct CrashReport {
    /// Sequences run.
    pub sequences: u64,
    /// Operations run.
    pub ops: u64,
    /// Fences observed.
    pub fences: u64,
    /// Crash images recovered and checked.
    pub images: u64,
    /// Of those, images taken while the back end was patching (draining the log).
    pub images_mid_patch: u64,
    /// Of those, images with lines persisted in part.
    pub images_torn: u64,
    /// Idempotence re-runs.
    pub idempotence_checks: u64,
    /// Every violation, with its seed and fence.
    pub violations: Vec<String>,
}

impl CrashReport {
    /// Adds another report's counts.
    pub fn merge(&mut self, o: CrashReport) {
        self.sequences += o.sequences;
        self.ops += o.ops;
        self.fences += o.fences;
        self.images += o.images;
        self.images_mid_patch += o.images_mid_patch;
        self.images_torn += o.images_torn;
        self.idempotence_checks += o.idempotence_checks;
        self.violations.extend(o.violations);
    }
}

const PATHS: &[&str] = &["/a", "/b", "/c", "/d", "/e", "/d/x", "/d/y", "/e/x"];

fn gen_op(rng: &mut Rng, t: &Tree) -> Op {
    for _ in 0..50 {
        let p = rng.pick(PATHS).expect("non-empty").to_string();
        let op = match rng.below(100) {
            0..=19 => Op::Create(p),
            20..=49 => {
                let off = rng.below(12_000);
                let len = 1 + rng.below(6_000) as usize;
                Op::Write(p, off, rng.bytes(len))
            }
            50..=59 => Op::Truncate(p, rng.below(14_000)),
            60..=67 => Op::Unlink(p),
            68..=75 => Op::Mkdir(p),
            76..=82 => Op::Rmdir(p),
            _ => Op::Rename(p, rng.pick(PATHS).expect("non-empty").to_string()),
        };
        if apply(&mut t.clone(), &op) {
            return op;
        }
    }
    Op::Mkdir("/d".into())
}

fn run_op(fs: &Fs, op: &Op) -> Result<(), nicfs_frontend::FsError> {
    match op {
        Op::Create(p) => fs
            .open(p, OpenFlags { create: true, excl: true, ..OpenFlags::CREATE }, 0o644)
            .and_then(|fd| fs.close(fd)),
        Op::Write(p, off, d) => {
            let fd = fs.open(p, OpenFlags::RDWR, 0)?;
            fs.pwrite(fd, d, *off)?;
            fs.close(fd)
        }
        Op::Truncate(p, s) => fs.truncate(p, *s),
        Op::Unlink(p) => fs.unlink(p),
        Op::Mkdir(p) => fs.mkdir(p, 0o755),
        Op::Rmdir(p) => fs.rmdir(p),
        Op::Rename(a, b) => fs.rename(a, b),
    }
}

/// The small file system every sequence runs on (1 MiB; a 64 KiB log forces drains).
pub fn crash_format() -> FormatConfig {
    crash_format_for(1)
}

/// [`crash_format`] with `front_ends` log spaces.
pub fn crash_format_for(front_ends: usize) -> FormatConfig {
    FormatConfig {
        size_bytes: 1 << 20,
        inodes: 64,
        log_spaces: front_ends as u32,
        log_headers: 64,
        log_data_bytes: 64 << 10,
        journal_blocks: 8,
    }
}

/// A populated image of [`crash_format`] for corruption tests: applied files and directories
/// (`/d`, `/d/f0`, `/d/f2`..`/d/f5` of 5,000 + 3,000·i bytes of `i + 1`) plus records still
/// pending in the log (a rename of `/d/f1` to `/g`, a truncation of `/d/f2` to 10 bytes, and
/// "pending" written at offset 100 of `/d/f3`).
pub fn populated_image() -> (Vec<u8>, nicfs_layout::Geometry) {
    let fmt = crash_format();
    let pm = Arc::new(CrashPm::new(fmt.size_bytes));
    let geo = mkfs(pm.as_ref(), &fmt, 3).expect("mkfs");
    let shared: SharedPm = pm.clone();
    let comm = Arc::new(CommRegion::anonymous().expect("comm region"));
    let (sh, _) = open(shared.clone(), comm.clone(), BackendConfig::free()).expect("back end");
    let link = Box::new(DirectLink::new(sh, 0));
    let fs = Fs::new(Client::attach_with(shared, comm, 0, link, FrontendConfig::default()).expect("attach"));
    fs.mkdir("/d", 0o755).expect("mkdir");
    for i in 0..6 {
        let fd = fs.open(&format!("/d/f{i}"), OpenFlags::CREATE, 0o644).expect("create");
        fs.pwrite(fd, &vec![i as u8 + 1; 5000 + i * 3000], 0).expect("write");
        fs.close(fd).expect("close");
    }
    fs.client().sync_all().expect("sync");
    fs.rename("/d/f1", "/g").expect("rename");
    fs.truncate("/d/f2", 10).expect("truncate");
    let fd = fs.open("/d/f3", OpenFlags::RDWR, 0).expect("open");
    fs.pwrite(fd, b"pending", 100).expect("write");
    std::mem::forget(fs); // leave the last records in the log
    (pm.live_image(), geo)
}

fn summarize(t: &Tree) -> String {
    t.iter()
        .map(|(k, v)| match v {
            Node::Dir => format!("{k}/"),
            Node::File(d) => format!("{k}({}B,{:08x})", d.len(), nicfs_layout::crc32(d)),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

struct Ctx {
    acked: Tree,
    inflight: Option<Tree>,
    report: CrashReport,
    seed: u64,
    cfg: CrashConfig,
    last_op: String,
    draining: bool,
}

fn backend_cfg() -> BackendConfig {
    BackendConfig { batch_max: 6, ..BackendConfig::free() }
}

/// Recovers one image and compares it with the allowed states.
fn check_image(ctx: &mut Ctx, img: Vec<u8>, fence: u64) {
    ctx.report.images += 1;
    let n = ctx.report.images;
    let pm: SharedPm = Arc::new(CrashPm::from_image(img));
    let mut fail = |msg: String| {
        let v = format!("seed {} fence {fence} during {}: {msg}", ctx.seed, ctx.last_op);
        ctx.report.violations.push(v);
    };
    let comm = match CommRegion::anonymous() {
        Ok(c) => Arc::new(c),
        Err(e) => return fail(format!("comm region: {e}")),
    };
    let debug = std::env::var("NICFS_CRASH_DEBUG").is_ok();
    if debug {
        let geo = nicfs_store::Space::open(pm.clone()).map(|s| *s.geo_ref());
        if let Ok(g) = geo {
            let ls = nicfs_store::LogSpace { index: 0, geo: g.log_space(0) };
            let (h, t) = (ls.head(pm.as_ref()), ls.tail(pm.as_ref()));
            let mut jh = [0u8; 28];
            nicfs_pm::Pm::read(pm.as_ref(), nicfs_pm::PmAddr(g.journal_start as u64 * 4096), &mut jh);
            eprintln!(
                "image {n} fence {fence}: head {h} tail {t} journal {:?}",
                nicfs_layout::JournalHeader::decode(&jh, g.journal_blocks)
            );
        }
    }
    let rep = match open(pm.clone(), comm.clone(), backend_cfg()) {
        Ok((_, rep)) => rep,
        Err(e) => return fail(format!("recovery failed: {e}")),
    };
    if !rep.errors.is_empty() || rep.rejected > 0 {
        return fail(format!("recovery errors {:?}, rejected {}", rep.errors, rep.rejected));
    }
    let space = match Space::open(pm.clone()) {
        Ok(s) => s,
        Err(e) => return fail(format!("superblock after recovery: {e}")),
    };
    let tree = match read_tree(&space) {
        Ok(t) => t,
        Err(e) => return fail(format!("tree unreadable: {e}")),
    };
    if debug {
        eprintln!(
            "  recovered: journal {:?} batches {:?} -> [{}]",
            rep.journal,
            rep.batches,
            summarize(&tree)
        );
    }
    if tree != ctx.acked && Some(&tree) != ctx.inflight.as_ref() {
        return fail(format!(
            "recovered [{}] but acknowledged state is [{}]{}",
            summarize(&tree),
            summarize(&ctx.acked),
            ctx.inflight
                .as_ref()
                .map(|t| format!(" and in-flight result is [{}]", summarize(t)))
                .unwrap_or_default()
        ));
    }
    let f = fsck(&space);
    if !f.is_clean() {
        return fail(format!("fsck after recovery: {:?}", f.problems));
    }
    if ctx.cfg.idempotence_every > 0 && n.is_multiple_of(ctx.cfg.idempotence_every) {
        ctx.report.idempotence_checks += 1;
        let again = open(pm.clone(), comm, backend_cfg()).map(|_| read_tree(&space));
        match again {
            Ok(Ok(t2)) if t2 == tree => {}
            other => fail(format!("recovery not idempotent: {:?}", other.map(|r| r.map(|t| summarize(&t))))),
        }
    }
}

/// Runs one seeded sequence. A failure message names the seed, so any violation can be
/// replayed with `nicfs crashcheck --seed N --count 1` (and the same `--front-ends`).
pub fn run_seed(seed: u64, cfg: &CrashConfig) -> CrashReport {
    let front_ends = cfg.front_ends.clamp(1, 2);
    let fmt = crash_format_for(front_ends);
    let pm = Arc::new(CrashPm::new(fmt.size_bytes));
    let mut report = CrashReport { sequences: 1, ..CrashReport::default() };
    let setup = (|| -> Result<Vec<Fs>, String> {
        mkfs(pm.as_ref(), &fmt, seed).map_err(|e| e.to_string())?;
        let shared: SharedPm = pm.clone();
        let comm = Arc::new(CommRegion::anonymous().map_err(|e| e.to_string())?);
        let (sh, _) = open(shared.clone(), comm.clone(), backend_cfg()).map_err(|e| e.to_string())?;
        (0..front_ends)
            .map(|slot| {
                let link = Box::new(DirectLink::new(sh.clone(), slot));
                Client::attach_with(
                    shared.clone(),
                    comm.clone(),
                    slot as u32,
                    link,
                    FrontendConfig::default(),
                )
                .map(Fs::new)
                .map_err(|e| e.to_string())
            })
            .collect()
    })();
    let fss = match setup {
        Ok(fss) => fss,
        Err(e) => {
            report.violations.push(format!("seed {seed}: setup failed: {e}"));
            return report;
        }
    };
    let ctx = Arc::new(Mutex::new(Ctx {
        acked: Tree::new(),
        inflight: None,
        report,
        seed,
        cfg: cfg.clone(),
        last_op: "setup".into(),
        draining: false,
    }));
    let c2 = ctx.clone();
    pm.set_observer(Some(Box::new(move |cp| {
        let mut ctx = c2.lock().unwrap_or_else(|e| e.into_inner());
        ctx.report.fences += 1;
        let (subsets, torn) = (ctx.cfg.subsets, ctx.cfg.torn);
        let (images, n_torn) = cp.images(subsets, torn, ctx.seed.rotate_left(17) ^ cp.fence_index());
        ctx.report.images_torn += n_torn as u64;
        for img in images {
            if ctx.draining {
                ctx.report.images_mid_patch += 1;
            }
            check_image(&mut ctx, img, cp.fence_index());
        }
    })));
    let mut rng = Rng::new(seed);
    let mut model = Tree::new();
    for _ in 0..cfg.ops {
        let op = gen_op(&mut rng, &model);
        // One front end draws nothing here, so its sequences are those of earlier versions.
        let fs = if front_ends > 1 { &fss[rng.below(front_ends as u64) as usize] } else { &fss[0] };
        let mut next = model.clone();
        apply(&mut next, &op);
        {
            let mut c = ctx.lock().unwrap_or_else(|e| e.into_inner());
            c.inflight = Some(next.clone());
            c.last_op = format!("{:?} on front end {}", short(&op), fs.client().slot());
            c.report.ops += 1;
        }
        if let Err(e) = run_op(fs, &op) {
            let mut c = ctx.lock().unwrap_or_else(|e| e.into_inner());
            let v = format!("seed {seed}: file system refused valid {:?}: {e}", short(&op));
            c.report.violations.push(v);
            break;
        }
        model = next;
        {
            let mut c = ctx.lock().unwrap_or_else(|e| e.into_inner());
            c.acked = model.clone();
            c.inflight = None;
            c.last_op = "drain".into();
        }
        if rng.below(100) < cfg.drain_pct {
            ctx.lock().unwrap_or_else(|e| e.into_inner()).draining = true;
            let _ = fs.client().sync_all();
            ctx.lock().unwrap_or_else(|e| e.into_inner()).draining = false;
        }
    }
    for fs in &fss {
        let _ = fs.client().sync_all();
    }
    pm.set_observer(None);
    drop(fss);
    let mut c = ctx.lock().unwrap_or_else(|e| e.into_inner());
    // The final live image must also recover to the final state.
    let img = pm.live_image();
    check_image(&mut c, img, u64::MAX);
    std::mem::take(&mut c.report)
}

fn short(op: &Op) -> String {
    match op {
        Op::Write(p, off, d) => format!("Write({p}, {off}, {} bytes)", d.len()),
        other => format!("{other:?}"),
    }
}
