//! `ssdlab serve [DEVICE]`: the device over NBD until Ctrl-C, SIGTERM or `--duration`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use live::ServerConfig;
use ssdlab::serve::{ServeOptions, Timing, start};

use crate::cli::{ServeArgs, TimingArg};
use crate::device;

/// Set by SIGINT / SIGTERM.
static STOP: AtomicBool = AtomicBool::new(false);

/// No transparent huge pages while serving. mimalloc asks for them on its arenas, and the
/// first touch of a huge page zeroes all 2 MiB of it at once: on a fresh VM that stalled the
/// device thread for about 2.5 ms every 17 ms of 4 KiB random writes under `--timing model`
/// (the data cache filling), so that 7% of the completions went out more than 1 ms late.
/// With 4 KiB pages the same zeroing is spread over the allocations.
fn no_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and touches no memory of ours.
    let r = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    if r != 0 {
        eprintln!(
            "ssdlab serve: could not turn transparent huge pages off ({})",
            std::io::Error::last_os_error()
        );
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn run(a: ServeArgs) -> Result<()> {
    let mut cfg = device::load(a.device.as_deref())?;
    if a.blocks > 0 {
        cfg.geometry.blocks = a.blocks;
    }
    cfg.validate().with_context(|| format!("device {} with --blocks {}", cfg.name, a.blocks))?;
    if !(a.dilation.is_finite() && a.dilation >= 1e-3) {
        bail!("--dilation {}: expected a positive factor, e.g. 2 to run the model at half speed", a.dilation);
    }
    let max_request = u32::try_from(a.max_request.bytes()).context("--max-request: at most 1 GiB")?;
    let tcp = match (&a.listen[..], &a.unix[..]) {
        ([], []) => vec![SocketAddr::from(([127, 0, 0, 1], 10809))],
        (l, _) => l.to_vec(),
    };
    let opts = ServeOptions {
        image: a.image.clone(),
        timing: match a.timing {
            TimingArg::Model => Timing::Model { dilation: a.dilation },
            TimingArg::None => Timing::None,
        },
        seed: a.seed,
        export: a.export.clone(),
        server: ServerConfig {
            tcp,
            unix: a.unix.clone(),
            allow_non_loopback: a.allow_remote,
            max_request_bytes: max_request,
            ..ServerConfig::default()
        },
        stats: (!a.quiet).then(|| a.stats.clone()),
    };
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe; SIG_IGN is a
    // valid disposition. SIGPIPE is ignored while serving (`main` restores the default for
    // `ssdlab run | head`): a client that vanishes with replies on the way must cost its own
    // connection an EPIPE, not kill the server with every other client's unflushed data.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    no_huge_pages();
    let serving = start(cfg.clone(), opts)?;
    eprintln!(
        "ssdlab serve: {} ({}, {} timing{}) — {}",
        cfg.name,
        sim::ByteSize(serving.size),
        match a.timing {
            TimingArg::Model => "model",
            TimingArg::None => "no",
        },
        if a.timing == TimingArg::Model && a.dilation != 1.0 {
            format!(", dilation {}", a.dilation)
        } else {
            String::new()
        },
        serving.opened
    );
    for addr in serving.addrs() {
        eprintln!("  export `{}` on {addr}", a.export);
    }
    eprintln!("  stop with Ctrl-C (clean shutdown: flush, checkpoint, report)");
    let started = Instant::now();
    while !STOP.load(Ordering::SeqCst) && a.duration.is_none_or(|d| started.elapsed() < d) {
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("ssdlab serve: shutting down (finishing requests in flight, checkpointing the image)");
    let report = serving.stop()?;
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
    }
    println!("{}", report::summary(&report));
    if let Some(l) = &report.live {
        println!(
            "live: {} connections, {} requests ({} errors) in {:.1} s; image {}; open {:.0} ms",
            l.connections, l.requests, l.errors, l.wall_s, l.opened, l.open_ms
        );
        if l.timing == "model" {
            println!(
                "pacing: {} of {} completions late by > 100 µs ({} by > 1 ms); lag mean {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                l.late, l.requests, l.late_1ms, l.lag_mean_us, l.lag_p99_us, l.lag_max_us
            );
        }
    }
    Ok(())
}
