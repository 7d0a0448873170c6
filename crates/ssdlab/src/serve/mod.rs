//! `ssdlab serve`: the simulated device as a real block device over NBD.
//!
//! ```text
//!   NBD connections (live crate: a thread each for the handshake, then Backend::adopt)
//!        |  Msg::Adopt(qid, Polled) over a channel, plus a byte on the wake-up socket
//!        v
//!   device thread: owns the Device (the simulation is single-threaded) and every
//!   connection's socket in transmission (non-blocking)
//!        loop: bring virtual time up to the wall clock (`model`)
//!              read new requests; start each as a task on its connection's NVMe queue pair
//!              run the device (`none`: until a few requests completed, or a slice)
//!              answer the requests that completed, and write the replies
//!              once a second: a stats line
//!              nothing to do: poll(2) the sockets until the next modelled completion
//! ```
//!
//! One thread reads, simulates and writes: a request costs no thread hand-off, which on a
//! small machine matters more than anything else (a wake-up of a reader or writer thread
//! preempts the device thread on its core).
//!
//! **Pacing.** With `--timing model`, virtual time follows the wall clock (divided by the
//! dilation) from the moment serving starts: a request enters the device at the virtual time
//! of its arrival and is answered when the wall clock reaches its modelled completion time
//! (never earlier; later only when the host cannot keep up, which the report counts). With
//! `--timing none` the device runs as fast as it can and answers as soon as it is done.
//!
//! **Durability.** Data lives in the NAND image. As on a real drive with a volatile write
//! cache, a write is acknowledged once it is in the data cache; Flush and FUA writes are
//! answered only after the data is programmed into the image and the image is synced, so they
//! survive a kill or a power cut. Programs reach the image file through the image store's own
//! writer thread, in order (a kill loses at most its queue, which holds nothing flushed). On a
//! clean shutdown the device is quiesced and checkpointed; after a crash the next start
//! recovers from the OOB records.

mod backend;
mod client;
pub mod console;
mod stats;

pub use client::live_summary;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use backend::{DeviceBackend, Inbox, Msg, ToDevice, to_device, wait_ready};
use firmware::config::DeviceConfig;
use firmware::device::{Device, Opened, OpenedAs};
use host::live::{AttachError, LiveError, LiveHost, LiveOp, LiveRequest, LiveStats};
use host::run::RunOptions;
use live::proto::Errno;
use live::{BlockSize, Bound, ExportInfo, Op, Polled, Replier, Request, Server, ServerConfig};
use report::{Report, RunInfo, assemble};
use sim::stats::LogHistogram;
use sim::{CoreId, SimDuration, SimTime};
use stats::{StatsOut, Tick};

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
    let (to_device, inbox) = to_device()?;
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(u64, u32, String)>>();
    let device_opts = DeviceOptions {
        image: opts.image.clone(),
        timing: opts.timing,
        seed: opts.seed,
        stats: opts.stats.clone(),
        max_connections: opts.max_connections,
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

struct DeviceOptions {
    image: PathBuf,
    timing: Timing,
    seed: u64,
    stats: Option<PathBuf>,
    max_connections: usize,
}

/// With `--timing none`, the device runs until this many requests completed (or a slice of
/// virtual time passed), then their replies are sent: one system call for several replies,
/// while the client still has requests in flight to keep the device busy.
const ANSWER_BATCH: usize = 8;

/// A finished request waiting for its release.
struct Done {
    /// The answer still to send (`model`: it waits for its modelled time); `None` if the task
    /// answered already (`none`: queued on its connection as soon as the device is done; the
    /// run stops every few completions to send them, see [`ANSWER_BATCH`]).
    reply: Option<(Replier, Result<Option<Vec<u8>>, LiveError>)>,
    /// The error the client gets, if any.
    errno: Option<Errno>,
    /// The operation type, an index into [`client::OPS`].
    op: usize,
    /// When the device thread read the request.
    received: Instant,
    completed: SimTime,
    bytes: u64,
}

/// Opens (or creates) the image and attaches the live host to the device.
fn open_device(cfg: &DeviceConfig, o: &DeviceOptions) -> Result<(Device, Opened, Rc<LiveHost>)> {
    let (dev, opened) = Device::open_image(cfg, &o.image, o.seed).context("opening the NAND image")?;
    let opts = RunOptions { interval: SimDuration::from_millis(100), ..RunOptions::default() };
    let host = LiveHost::open(&dev, &opts).map_err(|e| anyhow!("{e}"))?;
    Ok((dev, opened, host))
}

fn device_thread(
    cfg: DeviceConfig,
    o: DeviceOptions,
    mut inbox: Inbox,
    ready: Sender<Result<(u64, u32, String)>>,
) -> Result<Report> {
    let (dev, opened, host) = match open_device(&cfg, &o) {
        Ok(d) => d,
        Err(e) => {
            let msg = format!("{e:#}");
            let _ = ready.send(Err(e));
            return Err(anyhow!(msg));
        }
    };
    let how = match &opened.how {
        OpenedAs::Created => "created".to_string(),
        OpenedAs::Clean => "clean".to_string(),
        OpenedAs::Recovered { why } => format!("recovered: {why}"),
    };
    let opened_line = match &opened.how {
        OpenedAs::Created => format!("new image {}", o.image.display()),
        OpenedAs::Clean => format!("image {} mounted clean in {:.0?}", o.image.display(), opened.wall),
        OpenedAs::Recovered { why } => format!(
            "image {} recovered from OOB in {:.0?} ({why}; {} units mapped, {} translation pages rewritten)",
            o.image.display(),
            opened.wall,
            opened.mount.mapped_units,
            opened.mount.translation_pages_rewritten
        ),
    };
    let _ = ready.send(Ok((host.capacity(), host.lba_bytes() as u32, opened_line)));
    if matches!(o.timing, Timing::Model { .. }) {
        precise_timers();
    }
    host.limit_connections(o.max_connections);
    // Connections attached and refused, counted by the tasks that attach them.
    let (connected, refused) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(0u64)));

    let mut live = LiveStats {
        timing: match o.timing {
            Timing::Model { .. } => "model".into(),
            Timing::None => "none".into(),
        },
        dilation: match o.timing {
            Timing::Model { dilation } => dilation,
            Timing::None => 1.0,
        },
        image: o.image.display().to_string(),
        opened: how.clone(),
        open_ms: opened.wall.as_secs_f64() * 1e3,
        translation_pages_rewritten: opened.mount.translation_pages_rewritten,
        ..LiveStats::default()
    };
    let mut stats_out = StatsOut::open(o.stats.as_deref())?;
    let sim = &dev.platform.sim;
    // Wall and virtual time at the start: model time t is due at w0 + (t - v0) x dilation.
    let (w0, v0) = (Instant::now(), sim.now());
    let started = w0;
    let due_wall =
        |t: SimTime, d: f64| w0 + Duration::from_secs_f64(t.saturating_since(v0).as_secs_f64() * d);
    let done: Rc<RefCell<VecDeque<Done>>> = Rc::default();
    let mut outstanding = 0u64;
    let mut stopping = false;
    let mut lag = LogHistogram::default();
    let mut tick = Tick::default();
    let mut next_tick = started + Duration::from_secs(1);
    let array = dev.platform.fil.array().clone();
    // Functional timing answers each request the moment the device completes it.
    let answer_now = o.timing == Timing::None;
    let mut conns: Vec<(u16, Polled)> = Vec::new();
    // Requests answered in this turn, and what the clients saw of all of them.
    let mut answered: Vec<Done> = Vec::new();
    let mut clients = client::ClientView::default();
    loop {
        // 1. Virtual time up to now.
        if let Timing::Model { dilation } = o.timing {
            let target = v0 + SimDuration::from_secs_f64(w0.elapsed().as_secs_f64() / dilation);
            sim.run_through(target.max(sim.now())).map_err(|d| anyhow!("the device deadlocked: {d}"))?;
        }
        // 2. New connections and requests start now.
        while let Some(m) = inbox.next() {
            match m {
                Msg::Connect(tx) => {
                    let (h, connected, refused) = (host.clone(), connected.clone(), refused.clone());
                    sim.cx().spawn(CoreId::UNBOUND, "live: connect", async move {
                        let attached = h.attach().await.map_err(|e| refusal(&e, h.max_queues()));
                        match &attached {
                            Ok(_) => connected.set(connected.get() + 1),
                            Err(why) => {
                                refused.set(refused.get() + 1);
                                console::note(format_args!("ssdlab serve: refused a connection: {why}"));
                            }
                        }
                        let _ = tx.send(attached);
                    });
                }
                Msg::Adopt(qid, polled) => conns.push((qid, *polled)),
                Msg::Disconnect(qid) => {
                    let h = host.clone();
                    sim.cx().spawn(CoreId::UNBOUND, "live: disconnect", async move { h.detach(qid).await });
                }
                Msg::Stop => stopping = true,
            }
        }
        stopping |= inbox.closed;
        for (qid, conn) in &mut conns {
            conn.receive(&mut |request, reply| {
                outstanding += 1;
                let received = Instant::now();
                start_request(&dev, &host, &array, &done, *qid, (request, reply, received), answer_now);
            });
        }
        // 3. Run.
        match o.timing {
            Timing::Model { .. } => {
                let now = sim.now();
                sim.run_through(now).map_err(|d| anyhow!("the device deadlocked: {d}"))?;
            }
            Timing::None => {
                // A request that completes stops the run once a few are done (see
                // `start_request`), so that their replies go out while the device goes on.
                let limit = sim.now() + SimDuration::from_millis(1);
                sim.run_until(limit).map_err(|d| anyhow!("the device deadlocked: {d}"))?;
            }
        }
        // 4. Answer what completed, and send the replies.
        let now_wall = Instant::now();
        answered.clear();
        while let Some(mut d) = done.borrow_mut().pop_front() {
            outstanding -= 1;
            if let Timing::Model { dilation } = o.timing {
                let late = now_wall.saturating_duration_since(due_wall(d.completed, dilation));
                lag.record(late.as_nanos() as u64);
                live.late += u64::from(late > Duration::from_micros(100));
                live.late_1ms += u64::from(late > Duration::from_millis(1));
            }
            if let Some((reply, result)) = d.reply.take() {
                answer(reply, result);
            }
            answered.push(d);
        }
        for (_, conn) in &mut conns {
            conn.send();
        }
        // Replies are on their sockets (or queued there, if a client is slow to read).
        let sent = Instant::now();
        for d in answered.drain(..) {
            live.requests += 1;
            live.errors += u64::from(d.errno.is_some());
            clients.record(d.op, d.received, sent, d.bytes, d.errno);
            tick.requests += 1;
            tick.errors += u64::from(d.errno.is_some());
            tick.bytes += if d.errno.is_none() { d.bytes } else { 0 };
            tick.latency.record(sent.saturating_duration_since(d.received).as_nanos() as u64);
        }
        // A finished connection is dropped: its thread then disconnects it from the device.
        conns.retain(|(_, conn)| !conn.is_finished());
        if now_wall >= next_tick {
            let secs = now_wall.duration_since(next_tick - Duration::from_secs(1)).as_secs_f64();
            stats_out.line(&dev, started, secs, &tick, &lag, o.timing);
            tick = Tick::default();
            next_tick = now_wall + Duration::from_secs(1);
        }
        if stopping && outstanding == 0 && conns.is_empty() {
            break;
        }
        // 5. Wait for the next thing to do.
        let wait = match o.timing {
            Timing::Model { dilation } => {
                let next = sim.next_timer().map(|t| due_wall(t, dilation));
                next.map_or(Duration::from_millis(100), |at| at.saturating_duration_since(Instant::now()))
            }
            Timing::None if outstanding > 0 => Duration::ZERO,
            Timing::None => Duration::from_millis(100),
        };
        let wait = wait.min(next_tick.saturating_duration_since(Instant::now()));
        // Requests already read but not started: no waiting for the socket.
        let wait = if conns.iter().any(|(_, c)| c.has_more()) { Duration::ZERO } else { wait };
        if wait < Duration::from_micros(50) {
            std::hint::spin_loop();
            continue;
        }
        if wait_ready(&inbox.woken, &conns, wait) {
            inbox.drain_wake_ups();
        }
    }
    // Clean shutdown: everything answered; quiesce and checkpoint.
    let dirty = dev.ftl.dirty_lines() * dev.platform.config.geometry.mapping_unit.bytes();
    console::note(format_args!(
        "ssdlab serve: every request answered; writing {:#} of cached data and the mapping to the image",
        sim::ByteSize(dirty)
    ));
    let quiescing = Instant::now();
    let checkpoint = dev.checkpoint();
    if checkpoint.is_ok() {
        console::note(format_args!("ssdlab serve: checkpointed in {:.1?}", quiescing.elapsed()));
    }
    if let Err(e) = &checkpoint {
        console::note(format_args!(
            "ssdlab serve: no clean-shutdown checkpoint ({e}); the next start recovers from the OOB"
        ));
    }
    live.client = clients.stats();
    live.errors_by_errno = clients.errors().clone();
    live.connections = connected.get();
    live.refused_connections = refused.get();
    live.wall_s = started.elapsed().as_secs_f64();
    live.lag_mean_us = lag.mean() / 1e3;
    live.lag_p99_us = lag.quantile(0.99) as f64 / 1e3;
    live.lag_max_us = lag.max() as f64 / 1e3;
    let mut results = host.finish(&dev);
    results.live = Some(live);
    let info = RunInfo {
        seed: o.seed,
        jobs: Vec::new(),
        initial_state: format!("image {} ({how})", o.image.display()),
        wall: started.elapsed(),
    };
    Ok(assemble(&dev, &results, &info))
}

/// What a client that cannot be attached is told (in `NBD_REP_ERR_POLICY`), and the log says.
fn refusal(e: &AttachError, queues: u16) -> String {
    match e {
        AttachError::Full { limit } => format!(
            "the server is at its limit of {limit} connections (ssdlab serve --max-connections; \
             they share the device's {queues} NVMe queue pairs); try again when one closes"
        ),
        AttachError::Queue { .. } => e.to_string(),
    }
}

/// Timeouts of this thread end when asked, not up to 50 µs later. Linux lets a timeout of an
/// ordinary thread expire late by its "timer slack" (50 µs by default) to batch wake-ups; the
/// device thread waits in `ppoll` until the next modelled completion, so at queue depth 1 the
/// slack was most of how late completions went out.
fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer (nanoseconds) and touches no memory of ours;
    // it applies to the calling thread only.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    if r != 0 {
        console::note(format_args!(
            "ssdlab serve: could not make timers precise ({}); completions may be late by up to 50 µs",
            std::io::Error::last_os_error()
        ));
    }
}

/// Starts one request as a task; it goes to `done` when the device completes it, answered
/// already if `answer_now`.
fn start_request(
    dev: &Device,
    host: &Rc<LiveHost>,
    array: &Rc<RefCell<nand::FlashArray>>,
    done: &Rc<RefCell<VecDeque<Done>>>,
    qid: u16,
    (request, reply, received): (Request, Replier, Instant),
    answer_now: bool,
) {
    let durable = request.fua || request.op == Op::Flush;
    let bytes = match request.op {
        Op::Read | Op::Write(_) => request.length as u64,
        _ => 0,
    };
    let kind = match request.op {
        Op::Read => 0,
        Op::Write(_) => 1,
        Op::Flush => 2,
        Op::Trim => 3,
        Op::WriteZeroes { .. } => 4,
    };
    let op = match request.op {
        Op::Read => LiveOp::Read,
        Op::Write(data) => LiveOp::Write(data),
        Op::Flush => LiveOp::Flush,
        Op::Trim => LiveOp::Trim,
        Op::WriteZeroes { .. } => LiveOp::WriteZeroes,
    };
    let req = LiveRequest { offset: request.offset, len: request.length as u64, fua: request.fua, op };
    let (h, a, d) = (host.clone(), array.clone(), done.clone());
    let cx = dev.platform.sim.cx();
    let c = cx.clone();
    cx.spawn(CoreId::UNBOUND, "live: request", async move {
        let mut result = h.serve(qid, req).await;
        if durable && result.is_ok() {
            // Programmed into the image by now; make it survive a power cut too.
            if let Err(e) = a.borrow_mut().sync() {
                result = Err(LiveError::Device(firmware::hil::Status::InternalError(format!(
                    "syncing the image: {e}"
                ))));
            }
        }
        let errno = result.as_ref().err().map(errno_of);
        let reply = if answer_now {
            answer(reply, result);
            None
        } else {
            Some((reply, result))
        };
        let mut done = d.borrow_mut();
        done.push_back(Done { reply, errno, op: kind, received, completed: c.now(), bytes });
        if answer_now && done.len() >= ANSWER_BATCH {
            c.stop(); // back to the loop, which sends these replies
        }
    });
}

/// Sends a request's answer: its data, or the NBD error for what went wrong.
fn answer(reply: Replier, result: Result<Option<Vec<u8>>, LiveError>) {
    match result {
        Ok(data) => reply.reply(Ok(data)),
        Err(e) => reply.error(errno_of(&e)),
    }
}

/// The NBD error for what went wrong.
fn errno_of(e: &LiveError) -> Errno {
    match e {
        LiveError::Invalid(_) => Errno::Inval,
        LiveError::Device(_) => Errno::Io,
    }
}

#[cfg(test)]
mod tests {
    /// Issue 17, item 5: at QD1, completions went out 64-72 µs after their modelled time, most
    /// of it the 50 µs timer slack Linux gives an ordinary thread's `ppoll` timeout.
    #[test]
    fn the_device_thread_asks_for_precise_timers() {
        let slack = std::thread::spawn(|| {
            super::precise_timers();
            // SAFETY: PR_GET_TIMERSLACK takes no arguments and returns this thread's slack.
            unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) }
        });
        assert_eq!(slack.join().unwrap(), 1, "timer slack in ns");
    }
}
