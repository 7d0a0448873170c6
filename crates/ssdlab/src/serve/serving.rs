//! Starting and stopping a server: the listeners first, then the image and the device
//! thread, then accepting; and a clean stop that merges the server's own error counts into
//! the device's report.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use anyhow::{Context, Result, anyhow};
use firmware::config::DeviceConfig;
use live::{BlockSize, Bound, ExportInfo, Server, ServerConfig};
use report::Report;

use super::backend::{DeviceBackend, Msg, ToDevice, to_device};
use super::client;
use super::device_thread::{DeviceOptions, device_thread};
use super::record::Recorder;

/// How completions are paced.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Timing {
    /// Release each completion at its modelled time; model time runs `dilation` times slower
    /// than the wall clock.
    Model {
        /// Slow-down of the model (1 = real time).
        dilation: f64,
    },
    /// Functional: as fast as possible.
    None,
}

/// What to serve and how.
pub struct ServeOptions {
    /// The NAND image (created if missing).
    pub image: PathBuf,
    /// Pacing.
    pub timing: Timing,
    /// Seed of the simulation.
    pub seed: u64,
    /// The export's name (clients may also ask for the default, empty name).
    pub export: String,
    /// Listeners and limits.
    pub server: ServerConfig,
    /// Where to write the stats line every second (`-` = standard error, `None` = nowhere).
    pub stats: Option<PathBuf>,
    /// Connections served at a time, spread over the device's queue pairs; one more is
    /// refused with a message saying why (and a line on standard error).
    pub max_connections: usize,
    /// `--record`: write every request answered to this file (docs/record-replay.md).
    pub record: Option<PathBuf>,
}

/// A server running.
pub struct Serving {
    server: Option<Server>,
    to_device: ToDevice,
    device: Option<JoinHandle<Result<Report>>>,
    /// How the image was opened, for the start-up message.
    pub opened: String,
    /// The export's size in bytes.
    pub size: u64,
}

impl Serving {
    /// Where clients connect (TCP addresses with the ports actually bound, then Unix sockets).
    pub fn addrs(&self) -> Vec<String> {
        self.server.as_ref().map(|s| s.addrs().iter().map(|a| a.to_string()).collect()).unwrap_or_default()
    }

    /// Stops serving cleanly: stops accepting, lets every connection finish what it sent,
    /// quiesces and checkpoints the device, and returns the report.
    pub fn stop(mut self) -> Result<Report> {
        let server = self.server.take().map(Server::shutdown);
        let _ = self.to_device.send(Msg::Stop);
        let device = self.device.take().expect("stopped once");
        let mut report = device.join().map_err(|_| anyhow!("the device thread panicked"))??;
        // Requests the server answered with an error itself never reached the device.
        if let (Some(stats), Some(live)) = (server, report.live.as_mut()) {
            for (&errno, &n) in live::proto::Errno::ALL.iter().zip(&stats.errors_by_errno) {
                if n > 0 {
                    *live.errors_by_errno.entry(client::errno_name(errno)).or_default() += n;
                    live.errors += n;
                    live.requests += n;
                }
            }
        }
        Ok(report)
    }
}

/// Binds the listeners, opens the image, starts the device thread and the NBD server. On
/// failure nothing is left behind: an image this call created is removed again.
pub fn start(cfg: DeviceConfig, opts: ServeOptions) -> Result<Serving> {
    // The listeners first: an address in use is reported before an image is created.
    let bound = Server::bind(opts.server.clone()).map_err(|e| anyhow!("{e}"))?;
    let created = !opts.image.exists();
    let started = start_bound(cfg, &opts, bound);
    if started.is_err() && created {
        let _ = std::fs::remove_file(&opts.image);
    }
    started
}

fn start_bound(cfg: DeviceConfig, opts: &ServeOptions, bound: Bound) -> Result<Serving> {
    let record = match &opts.record {
        Some(path) => {
            let timing = match opts.timing {
                Timing::Model { dilation } => format!("timing model, dilation {dilation}"),
                Timing::None => "timing none".to_string(),
            };
            let about = format!(
                "device {}, {} blocks per plane, {timing}, seed {}",
                cfg.name, cfg.geometry.blocks, opts.seed
            );
            Some(Recorder::create(path, &about)?)
        }
        None => None,
    };
    let (to_device, inbox) = to_device()?;
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(u64, u32, String)>>();
    let device_opts = DeviceOptions {
        image: opts.image.clone(),
        timing: opts.timing,
        seed: opts.seed,
        stats: opts.stats.clone(),
        max_connections: opts.max_connections,
        record,
    };
    let device = std::thread::Builder::new()
        .name("ssdlab-device".into())
        .spawn(move || device_thread(cfg, device_opts, inbox, ready_tx))
        .context("starting the device thread")?;
    let (size, lba, opened) = match ready_rx.recv() {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let _ = device.join();
            return Err(e);
        }
        Err(_) => return Err(anyhow!("the device thread failed to start: {:?}", device.join().err())),
    };
    let max = opts.server.max_request_bytes;
    let block_size = match BlockSize::new(lba, 4096.max(lba), max) {
        Ok(b) => b,
        Err(e) => return Err(stop_device(&to_device, device, anyhow!("block size: {e}"))),
    };
    let info = ExportInfo {
        description: Some(format!("ssdlab simulated SSD ({opened})")),
        can_flush: true,
        can_fua: true,
        can_trim: true,
        can_write_zeroes: true,
        // One device behind every connection: a flush on any of them flushes the whole cache.
        can_multi_conn: true,
        block_size,
        ..ExportInfo::new(opts.export.clone(), size)
    };
    let backend = match to_device.try_clone() {
        Ok(t) => Arc::new(DeviceBackend::new(info, t)),
        Err(e) => return Err(stop_device(&to_device, device, e)),
    };
    let server = match bound.start(backend) {
        Ok(s) => s,
        Err(e) => return Err(stop_device(&to_device, device, anyhow!("starting the NBD server: {e}"))),
    };
    Ok(Serving { server: Some(server), to_device, device: Some(device), opened, size })
}

/// Stops a device thread that will not serve, and passes `e` on.
fn stop_device(to_device: &ToDevice, device: JoinHandle<Result<Report>>, e: anyhow::Error) -> anyhow::Error {
    let _ = to_device.send(Msg::Stop);
    let _ = device.join();
    e
}
