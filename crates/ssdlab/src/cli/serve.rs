//! The arguments of `ssdlab serve`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Args, Debug)]
#[command(after_help = SERVE_EXAMPLES)]
pub struct ServeArgs {
    /// A preset name or a TOML file. Default: softssd (shrunk with --blocks).
    pub device: Option<String>,
    /// The NAND image holding the data: created if missing, else reopened (clean from its
    /// shutdown checkpoint, or recovered from its OOB after a crash). It is a sparse file as
    /// long as the raw flash plus 1/64 for OOB records (softssd by default: 16.25 GiB for an
    /// 8 GiB export; the start-up line says); on disk it takes only the blocks holding data,
    /// valid or not yet reclaimed by GC (an erased block's space is given back), so at most
    /// its length.
    #[arg(long, value_name = "FILE", default_value = "ssdlab.img")]
    pub image: PathBuf,
    /// Blocks per plane: shrinks the device (and its image) without changing its timing (GC
    /// thresholds the device sets in blocks scale with it). Default for serving: 16 (softssd:
    /// 16 GiB of raw flash, an 8 GiB export), or the fewest with which GC keeps the spare
    /// blocks it needs (the start-up line shows the size); `--blocks 0` keeps the preset's.
    #[arg(long)]
    pub blocks: Option<u32>,
    /// Change a device setting by its path before serving, as `run --set KEY=VALUE` does
    /// (repeatable; applied after --blocks), e.g. --set timing.t_read=120us.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// model: answer each request at its modelled completion time (a real-time SSD; the
    /// reply is written a few µs after it, and a client also sees the NBD round trip, which
    /// `ssdlab run` does not model: 10-40 µs per request over a Unix socket on a 2-core
    /// machine, see scripts/bench-nbd model); none: as fast as the simulation runs (functional).
    #[arg(long, value_enum, default_value_t = TimingArg::Model)]
    pub timing: TimingArg,
    /// Run the model this many times slower than the wall clock (--timing model), for when
    /// the host cannot keep up (the report says how often the model fell behind).
    #[arg(long, default_value_t = 1.0)]
    pub dilation: f64,
    /// TCP address to listen on, HOST:PORT (e.g. 127.0.0.1:10809, [::1]:10809,
    /// localhost:10809; port 0 picks a free one); repeatable; loopback only unless
    /// --allow-remote. Default: 127.0.0.1:10809.
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Vec<String>,
    /// Unix socket to listen on (repeatable); with it, TCP is off unless --listen is given.
    #[arg(long, value_name = "PATH")]
    pub unix: Vec<PathBuf>,
    /// Accept TCP addresses that are not loopback (there is no authentication).
    #[arg(long)]
    pub allow_remote: bool,
    /// The export's name.
    #[arg(long, default_value = "ssdlab")]
    pub export: String,
    /// Largest read or write request in bytes (a power of two, 64 KiB to 1 GiB). A
    /// connection may have 128 MiB of payload in flight, or one request's worth if more.
    #[arg(long, default_value = "32MiB")]
    pub max_request: sim::ByteSize,
    /// Connections served at a time. Any number of them share the device's NVMe queue pairs
    /// (as threads share them under Linux blk-mq: each connection goes to the queue pair with
    /// the fewest); one more is refused with a message saying why, and a line on standard
    /// error. Each connection costs a thread and up to its in-flight payload of memory.
    #[arg(long, value_name = "N", default_value_t = host::live::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// A stats line every second: to this file as JSON lines, or `-` for standard error.
    /// Default: standard error.
    #[arg(long, value_name = "FILE", default_value = "-")]
    pub stats: PathBuf,
    /// No stats lines.
    #[arg(long, conflicts_with = "stats")]
    pub quiet: bool,
    /// Write the final report (same schema as `ssdlab run`) here on shutdown.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Record every request answered to this file, one line each in arrival order: arrival
    /// (ns since the start), connection, queue pair, operation, offset, length, flags, status,
    /// the latency the client was given (request read to reply written) and the modelled
    /// latency. `ssdlab replay FILE` re-runs it in simulation; `ssdlab compare FILE SIM.csv`
    /// sets the latencies side by side (docs/record-replay.md).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Stop by itself after this long (wall clock), e.g. 30s; default: until Ctrl-C or SIGTERM.
    #[arg(long, value_parser = humantime_secs)]
    pub duration: Option<std::time::Duration>,
}

const SERVE_EXAMPLES: &str = "Examples:
  ssdlab serve                              softssd timing, an 8 GiB export, on 127.0.0.1:10809
  nbdinfo nbd://127.0.0.1                   ... then use it from any NBD client
  fio --ioengine=nbd --uri=nbd://127.0.0.1 --rw=randread --bs=4k --iodepth=32 --name=r
  ssdlab serve --timing none --unix /tmp/ssd.sock --image /tmp/ssd.img
  ssdlab serve pipessd --image p.img --json serve.json   report on Ctrl-C
  ssdlab serve --record live.rec            every request to live.rec, then:
  ssdlab replay live.rec softssd --blocks 16 --precondition none --per-request sim.csv
  ssdlab compare live.rec sim.csv           live and simulated latency side by side";

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingArg {
    /// Completions at their modelled time.
    Model,
    /// As fast as possible.
    None,
}

/// Parses `30s`, `500ms`, `2m` or a plain number of seconds.
pub(crate) fn humantime_secs(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("`{s}` is not a duration (e.g. 30s, 500ms, 2m)"))?;
    if v < 0.0 {
        return Err(format!("must not be negative (got `{s}`)"));
    }
    std::time::Duration::try_from_secs_f64(v * scale).map_err(|_| format!("`{s}` is not a duration"))
}
