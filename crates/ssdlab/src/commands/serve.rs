//! `ssdlab serve [DEVICE]`: the device over NBD until Ctrl-C, SIGTERM or `--duration`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use live::{ConfigError, ServerConfig};
use ssdlab::serve::{ServeOptions, Timing, start};

use crate::cli::{ServeArgs, TimingArg};
use crate::named_device;

/// `eprintln!` that cannot fail: a closed standard error must not take the server down (see
/// `ssdlab::serve::console`).
macro_rules! note {
    ($($t:tt)*) => {
        ssdlab::serve::console::note(format_args!($($t)*))
    };
}

/// `println!` that cannot fail.
macro_rules! out {
    ($($t:tt)*) => {
        ssdlab::serve::console::out(format_args!($($t)*))
    };
}

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
        note!(
            "ssdlab serve: could not turn transparent huge pages off ({})",
            std::io::Error::last_os_error()
        );
    }
}

/// The listeners and limits from the flags, checked with the flags' own names.
fn server_config(a: &ServeArgs) -> Result<ServerConfig> {
    let max_request = a.max_request.bytes();
    if !max_request.is_power_of_two() || !(1 << 16..=1 << 30).contains(&max_request) {
        bail!("--max-request {}: must be a power of two from 64KiB to 1GiB", a.max_request);
    }
    let mut tcp = a.listen.iter().map(|l| listen_addr(l)).collect::<Result<Vec<_>>>()?;
    if tcp.is_empty() && a.unix.is_empty() {
        tcp.push(SocketAddr::from(([127, 0, 0, 1], 10809)));
    }
    let defaults = ServerConfig::default();
    let cfg = ServerConfig {
        tcp,
        unix: a.unix.clone(),
        allow_non_loopback: a.allow_remote,
        max_request_bytes: max_request as u32,
        // A connection can always have one request of the largest size in flight.
        max_in_flight_bytes: defaults.max_in_flight_bytes.max(max_request),
        ..defaults
    };
    cfg.validate().map_err(|e| match e {
        ConfigError::NonLoopback(addr) => anyhow!(
            "--listen {addr} is not a loopback address: the server has no authentication or \
             encryption, so add --allow-remote to serve other hosts anyway"
        ),
        e => anyhow!("{e}"),
    })?;
    Ok(cfg)
}

/// `--listen HOST:PORT`: a numeric address, or a host name resolved to its first IPv4
/// address (else its first address): `localhost:10809` serves on 127.0.0.1.
fn listen_addr(text: &str) -> Result<SocketAddr> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let bad = |why: String| {
        anyhow!("--listen {text}: {why} (expected HOST:PORT, e.g. 127.0.0.1:10809 or localhost:10809)")
    };
    let addrs: Vec<SocketAddr> = text.to_socket_addrs().map_err(|e| bad(e.to_string()))?.collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| bad("the name has no address".into()))
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn run(a: ServeArgs) -> Result<()> {
    let mut cfg = named_device::load(a.device.as_deref())?;
    named_device::single_ssd(&cfg, "serve")?;
    if cfg.ftl.zoned_ns().is_some() {
        bail!(
            "{} has a zoned namespace, which NBD cannot carry (it has no zone commands): serve a conventional device (`enabled = false` in its [ftl.zoned]), or run zone workloads with `ssdlab run`",
            cfg.name
        );
    }
    let blocks = a.blocks.unwrap_or_else(|| named_device::serve_blocks(&cfg));
    named_device::set_blocks(&mut cfg, blocks)?;
    let cfg = super::run::settings(cfg, &a.set)?;
    if !(a.dilation.is_finite() && a.dilation >= 1e-3) {
        bail!("--dilation {}: expected a positive factor, e.g. 2 to run the model at half speed", a.dilation);
    }
    if a.max_connections == 0 {
        bail!("--max-connections 0: at least one connection must be allowed");
    }
    let server = server_config(&a)?;
    let opts = ServeOptions {
        image: a.image.clone(),
        timing: match a.timing {
            TimingArg::Model => Timing::Model { dilation: a.dilation },
            TimingArg::None => Timing::None,
        },
        seed: a.seed,
        export: a.export.clone(),
        server,
        stats: (!a.quiet).then(|| a.stats.clone()),
        max_connections: a.max_connections,
        record: a.record.clone(),
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
    note!(
        "ssdlab serve: {} ({:#} export, {} blocks per plane, {} timing{}) — {}",
        cfg.name,
        sim::ByteSize(serving.size),
        cfg.geometry.blocks,
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
    if let Ok(meta) = std::fs::metadata(&a.image) {
        use std::os::unix::fs::MetadataExt;
        note!(
            "  image {}: {:#} on disk now, at most {:#} (its length)",
            a.image.display(),
            sim::ByteSize(meta.blocks() * 512),
            sim::ByteSize(meta.len())
        );
    }
    for addr in serving.addrs() {
        note!("  export `{}` on {addr}", a.export);
    }
    note!(
        "  stop with Ctrl-C (clean shutdown: answer the requests in flight, write the cached data and the mapping \
         to the image, checkpoint, report; seconds after heavy writing)"
    );
    let started = Instant::now();
    while !STOP.load(Ordering::SeqCst) && a.duration.is_none_or(|d| started.elapsed() < d) {
        std::thread::sleep(Duration::from_millis(50));
    }
    note!("ssdlab serve: shutting down (finishing requests in flight, checkpointing the image)");
    let report = serving.stop()?;
    if let Some(path) = &a.json {
        super::write_json(path, &report)?;
    }
    out!(
        "the simulated device (its own clock: with --timing none it runs as fast as it can, so its latencies and rates are the model's, not what clients waited):"
    );
    out!("{}", report::summary(&report));
    if let Some(l) = &report.live {
        out!("{}", ssdlab::serve::live_summary(l));
        if l.timing == "model" {
            out!(
                "pacing: {} of {} completions late by > 100 µs ({} by > 1 ms); lag mean {:.1} µs, p99 {:.1} µs, max {:.1} µs",
                l.late,
                l.requests,
                l.late_1ms,
                l.lag_mean_us,
                l.lag_p99_us,
                l.lag_max_us
            );
        }
    }
    Ok(())
}
