//! Command-line parsing and dispatch.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use nicfs::crashcheck::{CrashConfig, CrashReport, run_seed};
use nicfs::mount::{ImageLock, comm_path, open_or_create_comm, open_pm};
use nicfs::mpcheck::{AckArray, run_worker};
use nicfs_backend::{Backend, BackendConfig};
use nicfs_comm::CommRegion;
use nicfs_frontend::{Client, FrontendConfig, Fs};
use nicfs_layout::FormatConfig;
use nicfs_pm::{CostModel, FastPm, MappedFile};
use nicfs_store::{LogSpace, Space, fsck, mkfs};

/// NICFS: a persistent-memory file system with a log-structured front end and an offloaded
/// back-end pipeline.
#[derive(Parser)]
#[command(name = "nicfs", version)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Create and format a PM file.
    Mkfs {
        /// The PM file (put it on tmpfs, e.g. /dev/shm).
        #[arg(long)]
        pm: PathBuf,
        /// Size, e.g. 256MiB or 1GiB (overrides the config file).
        #[arg(long)]
        size: Option<String>,
        /// A TOML format configuration (see `FormatConfig`).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Run the back end (the emulated SmartNIC) until interrupted.
    Daemon {
        /// The PM file.
        #[arg(long)]
        pm: PathBuf,
        /// A TOML back-end configuration (see `BackendConfig`).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Charge the default PM cost model on host accesses.
        #[arg(long)]
        timed: bool,
    },
    /// Mount through FUSE (a front end). Needs a running daemon unless --with-daemon.
    Mount {
        /// The PM file.
        #[arg(long)]
        pm: PathBuf,
        /// Where to mount.
        mountpoint: PathBuf,
        /// Run the back end inside this process too.
        #[arg(long)]
        with_daemon: bool,
        /// How long calls wait for a back end that died to be restarted before failing with
        /// EIO, in ms (reads of applied data do not wait).
        #[arg(long, default_value_t = FrontendConfig::default().backend_wait_ms)]
        backend_wait_ms: u64,
    },
    /// Check an image; with --repair, repair it and replay the logs. Exit status: 0 clean,
    /// 1 problems found and repaired, 4 problems left, 8 the check could not run.
    Fsck {
        /// The PM file.
        #[arg(long)]
        pm: PathBuf,
        /// Repair what the check finds (superblock, journal, logs, tree, bitmaps), then replay
        /// the logs.
        #[arg(long)]
        repair: bool,
    },
    /// Print geometry, log heads/tails and usage.
    Stat {
        /// The PM file.
        #[arg(long)]
        pm: PathBuf,
    },
    /// Run the crash-consistency checker.
    Crashcheck {
        /// First seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Number of seeds.
        #[arg(long, default_value_t = 20)]
        count: u64,
        /// Operations per sequence.
        #[arg(long, default_value_t = 14)]
        ops: usize,
        /// Front ends (1 or 2), each with its own log; operations go to one at random.
        #[arg(long, default_value_t = 1)]
        front_ends: usize,
        /// Images per fence with lines persisted in part (8-byte granularity).
        #[arg(long, default_value_t = 2)]
        torn: usize,
    },
    /// Run the multi-process checker (spawns worker processes).
    Mpcheck {
        /// Worker processes.
        #[arg(long, default_value_t = 4)]
        workers: u64,
        /// `private` (one file each), `shared` (one file, a region each, leases) or `overlap`
        /// (one file, every worker writes the same blocks).
        #[arg(long, default_value = "shared")]
        mode: String,
        /// Operations per worker.
        #[arg(long, default_value_t = 400)]
        ops: u64,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Internal: one multi-process checker worker.
    #[command(hide = true)]
    MpWorker {
        #[arg(long)]
        pm: PathBuf,
        #[arg(long)]
        id: u64,
        #[arg(long)]
        workers: u64,
        #[arg(long)]
        mode: String,
        #[arg(long)]
        ops: u64,
        #[arg(long)]
        seed: u64,
    },
    /// Benchmarks through the library API (see `nicfs bench --help`).
    Bench(crate::bench::BenchArgs),
    /// The paper's figures, regenerated in virtual time (see `nicfs figure --help`).
    Figure(crate::figure::FigureArgs),
}

fn parse_size(s: &str) -> Result<u64> {
    let s = s.trim();
    let (num, mul) = [
        ("GiB", 1u64 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ]
    .iter()
    .find_map(|(suf, m)| s.strip_suffix(suf).map(|n| (n, *m)))
    .unwrap_or((s, 1));
    let n: u64 = num.trim().parse().with_context(|| format!("bad size {s:?}"))?;
    n.checked_mul(mul).context("size overflows")
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn install_signals() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

fn load_backend_cfg(path: &Option<PathBuf>) -> Result<BackendConfig> {
    let cfg: BackendConfig = match path {
        Some(p) => toml::from_str(&std::fs::read_to_string(p)?)
            .with_context(|| format!("parsing {}", p.display()))?,
        None => BackendConfig::default(),
    };
    cfg.validate()?;
    Ok(cfg)
}

/// Locks the image, then recovers it and starts the back end. The lock is held for as long as
/// the returned [`ImageLock`] lives: drop it after stopping the back end.
pub(crate) fn start_backend(
    pm: &std::path::Path,
    cfg: BackendConfig,
    timed: bool,
) -> Result<(Backend, ImageLock)> {
    let lock = ImageLock::owner(pm, false)?;
    let host = open_pm(pm, timed.then(CostModel::default))?;
    let comm = Arc::new(open_or_create_comm(pm)?);
    let be = Backend::start(host, comm.clone(), cfg).context("starting the back end")?;
    let r = be.recovery();
    eprintln!(
        "nicfs: recovery: journal {} ({} records){}, replayed batches per log {:?}, rejected {}",
        if r.journal.applied { "re-applied" } else { "clean" },
        r.journal.records,
        if r.journal.torn { ", torn commit ignored" } else { "" },
        r.batches,
        r.rejected
    );
    for e in &r.errors {
        eprintln!("nicfs: recovery: {e}");
    }
    Ok((be, lock))
}

/// Attaches a front end to the back end serving `pm`. The returned [`ImageLock`] keeps `mkfs`
/// and `fsck --repair` off the image, also while the back end is down and the front end waits
/// for a new one: hold it for as long as the client is in use.
fn attach(pm: &std::path::Path, cfg: FrontendConfig) -> Result<(Client, ImageLock)> {
    let lock = ImageLock::front_end(pm)?;
    let host = open_pm(pm, None)?;
    let comm =
        Arc::new(CommRegion::open(&comm_path(pm)).context("no comm region: is `nicfs daemon` running?")?);
    Ok((Client::attach(host, comm, cfg)?, lock))
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Mkfs { pm, size, config } => {
            let cfg: FormatConfig = match (&config, size) {
                (Some(p), size) => {
                    let mut c: FormatConfig = toml::from_str(&std::fs::read_to_string(p)?)?;
                    if let Some(s) = size {
                        c.size_bytes = parse_size(&s)?;
                    }
                    c
                }
                (None, Some(s)) => FormatConfig::for_size(parse_size(&s)?),
                (None, None) => FormatConfig::default(),
            };
            let _lock = ImageLock::rewrite(&pm, true)?;
            let map = MappedFile::create(&pm, cfg.size_bytes)?;
            let fast = FastPm::new(map);
            let uuid = nicfs_comm::mono_ns() ^ (std::process::id() as u64) << 32;
            let geo = mkfs(&fast, &cfg, uuid)?;
            let _ = std::fs::remove_file(comm_path(&pm));
            println!(
                "formatted {} ({} MiB): {} inodes, {} data blocks, {} log spaces of {} headers + {} KiB data (flush: {:?})",
                pm.display(),
                cfg.size_bytes >> 20,
                geo.inode_count,
                geo.data_blocks,
                geo.log_spaces,
                geo.log_headers,
                geo.log_data_blocks * 4,
                fast.flush_kind()
            );
        }
        Cmd::Daemon { pm, config, timed } => {
            install_signals();
            let (be, _lock) = start_backend(&pm, load_backend_cfg(&config)?, timed)?;
            eprintln!("nicfs: back end running (pid {}); Ctrl-C to stop", std::process::id());
            while !STOP.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            be.stop();
        }
        Cmd::Mount { pm, mountpoint, with_daemon, backend_wait_ms } => {
            let be =
                if with_daemon { Some(start_backend(&pm, BackendConfig::default(), false)?) } else { None };
            let (client, _held) =
                attach(&pm, FrontendConfig { backend_wait_ms, ..FrontendConfig::default() })?;
            eprintln!(
                "nicfs: mounted {} on {} (log space {})",
                pm.display(),
                mountpoint.display(),
                client.slot()
            );
            nicfs_fuse::mount(client, &mountpoint)?;
            if let Some((b, _)) = be {
                b.stop();
            }
        }
        Cmd::Fsck { pm, repair } => std::process::exit(crate::fsck::run(&pm, repair)),
        Cmd::Stat { pm } => {
            let host = open_pm(&pm, None)?;
            let space = Space::open(host.clone())?;
            let g = space.geo_ref();
            println!("{g:#?}");
            for i in 0..g.log_spaces {
                if let Ok(ls) = LogSpace::open(&space, i) {
                    println!("log {i}: head {} tail {}", ls.head(host.as_ref()), ls.tail(host.as_ref()));
                }
            }
            let r = fsck(&space);
            println!("{} inodes in use, {} blocks in use of {}", r.inodes, r.blocks, g.data_blocks);
            println!("PM size {} bytes", nicfs_pm::Pm::len(host.as_ref()));
        }
        Cmd::Crashcheck { seed, count, ops, front_ends, torn } => {
            if !(1..=2).contains(&front_ends) {
                bail!("--front-ends must be 1 or 2");
            }
            let cfg = CrashConfig { ops, front_ends, torn, ..CrashConfig::default() };
            let mut total = CrashReport::default();
            for s in seed..seed + count {
                total.merge(run_seed(s, &cfg));
            }
            println!(
                "crashcheck: {} sequences, {} ops, {} fences, {} crash images checked ({} while the back end was patching, {} with lines persisted in part), {} idempotence re-runs, {} violations",
                total.sequences,
                total.ops,
                total.fences,
                total.images,
                total.images_mid_patch,
                total.images_torn,
                total.idempotence_checks,
                total.violations.len()
            );
            for v in total.violations.iter().take(20) {
                println!("  {v}");
            }
            if !total.violations.is_empty() {
                bail!("{} violations", total.violations.len());
            }
        }
        Cmd::Mpcheck { workers, mode, ops, seed } => crate::mp::mpcheck(workers, &mode, ops, seed)?,
        Cmd::MpWorker { pm, id, workers, mode, ops, seed } => {
            let mode = crate::mp::parse_mode(&mode)?;
            let (client, _held) = attach(&pm, FrontendConfig::default())?;
            let fs = Fs::new(client);
            let acks = AckArray::open(&crate::mp::ack_path(&pm), false)?;
            let r = run_worker(&fs, &acks, id, workers, mode, ops, seed);
            println!("{}", serde_json::to_string(&r)?);
        }
        Cmd::Bench(args) => crate::bench::run(args)?,
        Cmd::Figure(args) => crate::figure::run(args)?,
    }
    Ok(())
}
