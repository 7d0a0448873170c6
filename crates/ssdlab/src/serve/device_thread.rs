//! The device thread: owns the device and every connection in transmission, reads requests,
//! runs the simulation, answers, paces against the wall clock (see the module docs of
//! `serve`).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use firmware::config::DeviceConfig;
use firmware::device::{Device, Opened, OpenedAs};
use host::live::{AttachError, LiveError, LiveHost, LiveOp, LiveRequest, LiveStats};
use host::run::RunOptions;
use host::trace::{Recorded, RecordedOp};
use live::proto::Errno;
use live::{Op, Polled, Replier, Request};
use report::{Report, RunInfo, assemble};
use sim::stats::LogHistogram;
use sim::{CoreId, SimDuration, SimTime};

use super::Timing;
use super::backend::{Inbox, Msg, wait_ready};
use super::client;
use super::console;
use super::record::Recorder;
use super::stats::{StatsOut, Tick};

/// What the device thread needs of [`ServeOptions`](super::ServeOptions).
pub(super) struct DeviceOptions {
    pub(super) image: PathBuf,
    pub(super) timing: Timing,
    pub(super) seed: u64,
    pub(super) stats: Option<PathBuf>,
    pub(super) max_connections: usize,
    /// `--record`: the recording, created already.
    pub(super) record: Option<Recorder>,
}

/// With `--timing none`, the device runs until this many requests completed (or a slice of
/// virtual time passed), then their replies are sent: one system call for several replies,
/// while the client still has requests in flight to keep the device busy.
const ANSWER_BATCH: usize = 8;

/// A wait shorter than this polls instead of sleeping: waking from `ppoll` costs a few
/// microseconds, and with `--timing model` a reply due that soon must not go out late.
const SLEEP_AT_LEAST: Duration = Duration::from_micros(50);

/// With `--timing model`, the device thread polls its sockets for this long after writing a
/// reply instead of sleeping in `ppoll`: at queue depth 1 the client's next request arrives
/// 10-20 µs after the reply, and catching it without a wake-up cut fio's mean QD1 latency by
/// 4-5 µs for writes and about 3 µs for reads on this project's 2-core machine (issue 17,
/// item 5). At most this much CPU per reply; a busy device polls anyway.
const POLL_AFTER_REPLY: Duration = Duration::from_micros(30);

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
    /// When it entered the device (virtual time).
    submitted: SimTime,
    completed: SimTime,
    bytes: u64,
    /// What the recording says of it.
    at: At,
    offset: u64,
    len: u64,
    fua: bool,
}

/// Where a request came from: its connection's queue pair, the connection (from 0, in the
/// order they were served) and its arrival number for the recording.
#[derive(Copy, Clone)]
struct At {
    qid: u16,
    conn: u32,
    arrival: u64,
}

/// Opens (or creates) the image and attaches the live host to the device.
fn open_device(cfg: &DeviceConfig, o: &DeviceOptions) -> Result<(Device, Opened, Rc<LiveHost>)> {
    let (dev, opened) = Device::open_image(cfg, &o.image, o.seed).context("opening the NAND image")?;
    let opts = RunOptions { interval: SimDuration::from_millis(100), ..RunOptions::default() };
    let host = LiveHost::open(&dev, &opts).map_err(|e| anyhow!("{e}"))?;
    Ok((dev, opened, host))
}

pub(super) fn device_thread(
    cfg: DeviceConfig,
    mut o: DeviceOptions,
    mut inbox: Inbox,
    ready: Sender<Result<(u64, u32, String)>>,
) -> Result<Report> {
    let (dev, opened, host) = match open_device(&cfg, &o) {
        Ok(d) => d,
        Err(e) => {
            let msg = crate::message::one_line(e.as_ref());
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
    let mut conns: Vec<(u16, u32, Polled)> = Vec::new();
    let mut next_conn = 0u32;
    let mut recorder = o.record.take();
    // Requests answered in this turn, and what the clients saw of all of them.
    let mut answered: Vec<Done> = Vec::new();
    let mut clients = client::ClientView::default();
    // When the last reply was written (polling follows it for `POLL_AFTER_REPLY`).
    let mut last_reply = started;
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
                Msg::Adopt(qid, polled) => {
                    conns.push((qid, next_conn, *polled));
                    next_conn += 1;
                }
                Msg::Disconnect(qid) => {
                    let h = host.clone();
                    sim.cx().spawn(CoreId::UNBOUND, "live: disconnect", async move { h.detach(qid).await });
                }
                Msg::Stop => stopping = true,
            }
        }
        stopping |= inbox.closed;
        let mut deadlock = None;
        for (qid, conn_no, conn) in &mut conns {
            conn.receive(&mut |request, reply| {
                outstanding += 1;
                let received = Instant::now();
                // The request enters the device at the virtual time of its arrival, not at the
                // time the loop reached at its top: on a busy machine the two were hundreds of
                // µs apart, and a replay of the recording (which stamps arrivals when read)
                // then differed from the live model by 3-6% at QD 8.
                if let Timing::Model { dilation } = o.timing {
                    let at =
                        v0 + SimDuration::from_secs_f64(received.duration_since(w0).as_secs_f64() / dilation);
                    if let Err(d) = sim.run_through(at.max(sim.now())) {
                        deadlock.get_or_insert(d);
                    }
                }
                let arrival = recorder.as_mut().map_or(0, Recorder::arrive);
                let at = At { qid: *qid, conn: *conn_no, arrival };
                start_request(&dev, &host, &array, &done, at, (request, reply, received), answer_now);
            });
        }
        if let Some(d) = deadlock {
            return Err(anyhow!("the device deadlocked: {d}"));
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
            if let Some((reply, result)) = d.reply.take() {
                answer(reply, result);
            }
            answered.push(d);
        }
        for (_, _, conn) in &mut conns {
            conn.send();
        }
        // Replies are on their sockets (or queued there, if a client is slow to read).
        let sent = Instant::now();
        if !answered.is_empty() {
            last_reply = sent;
        }
        for d in answered.drain(..) {
            if let Timing::Model { dilation } = o.timing {
                // How late the reply was written, against the modelled completion.
                let late = sent.saturating_duration_since(due_wall(d.completed, dilation));
                lag.record(late.as_nanos() as u64);
                live.late += u64::from(late > Duration::from_micros(100));
                live.late_1ms += u64::from(late > Duration::from_millis(1));
            }
            live.requests += 1;
            live.errors += u64::from(d.errno.is_some());
            clients.record(d.op, d.received, sent, d.bytes, d.errno);
            tick.requests += 1;
            tick.errors += u64::from(d.errno.is_some());
            tick.bytes += if d.errno.is_none() { d.bytes } else { 0 };
            tick.latency.record(sent.saturating_duration_since(d.received).as_nanos() as u64);
            if let Some(r) = recorder.as_mut() {
                r.done(d.at.arrival, recorded(&d, started, sent));
            }
        }
        // A finished connection is dropped: its thread then disconnects it from the device.
        conns.retain(|(_, _, conn)| !conn.is_finished());
        if now_wall >= next_tick {
            let secs = now_wall.duration_since(next_tick - Duration::from_secs(1)).as_secs_f64();
            stats_out.line(&dev, started, secs, &tick, &lag, o.timing);
            if let Some(r) = recorder.as_mut() {
                r.hand_over();
            }
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
        let wait = if conns.iter().any(|(_, _, c)| c.has_more()) { Duration::ZERO } else { wait };
        if poll_instead_of_sleeping(o.timing, wait, last_reply.elapsed()) {
            // Not `yield_now`: with any CPU-bound process on the machine (a build), a yield
            // hands it the core for a whole time slice (QD1 read latency 1.7 ms instead of
            // 0.3 ms beside two `nice -n 19` busy loops); the scheduler preempts a spinning
            // thread for a waking client anyway.
            std::hint::spin_loop();
            continue;
        }
        if wait_ready(&inbox.woken, &conns, wait) {
            inbox.drain_wake_ups();
        }
    }
    if let Some(r) = recorder.take() {
        match r.finish() {
            Ok(n) => console::note(format_args!("ssdlab serve: recorded {n} requests")),
            Err(e) => console::note(format_args!("ssdlab serve: the recording is incomplete: {e}")),
        };
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

/// Whether the loop goes round again at once instead of sleeping in `ppoll` for `wait`: close
/// to a deadline (a reply due that soon must not go out late), or, with `--timing model`, just
/// after a reply, when a client at a low queue depth sends its next request.
fn poll_instead_of_sleeping(timing: Timing, wait: Duration, since_reply: Duration) -> bool {
    wait < SLEEP_AT_LEAST || matches!(timing, Timing::Model { .. }) && since_reply < POLL_AFTER_REPLY
}

/// Starts one request as a task; it goes to `done` when the device completes it, answered
/// already if `answer_now`.
fn start_request(
    dev: &Device,
    host: &Rc<LiveHost>,
    array: &Rc<RefCell<nand::FlashArray>>,
    done: &Rc<RefCell<VecDeque<Done>>>,
    at: At,
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
    let (offset, len, fua) = (request.offset, request.length as u64, request.fua);
    let req = LiveRequest { offset, len, fua, op };
    let (h, a, d) = (host.clone(), array.clone(), done.clone());
    let cx = dev.platform.sim.cx();
    let c = cx.clone();
    let submitted = cx.now();
    cx.spawn(CoreId::UNBOUND, "live: request", async move {
        let mut result = h.serve(at.qid, req).await;
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
        let completed = c.now();
        done.push_back(Done {
            reply,
            errno,
            op: kind,
            received,
            submitted,
            completed,
            bytes,
            at,
            offset,
            len,
            fua,
        });
        if answer_now && done.len() >= ANSWER_BATCH {
            c.stop(); // back to the loop, which sends these replies
        }
    });
}

/// A request's line in the recording: `sent` is when its reply was written.
fn recorded(d: &Done, started: Instant, sent: Instant) -> Recorded {
    let ns = |from: Instant, to: Instant| to.saturating_duration_since(from).as_nanos() as u64;
    Recorded {
        t_ns: ns(started, d.received),
        conn: d.at.conn,
        queue: d.at.qid,
        op: RECORDED_OPS[d.op],
        offset: d.offset,
        len: d.len,
        fua: d.fua,
        error: d.errno.map(client::errno_name),
        latency_ns: ns(d.received, sent),
        device_ns: Some(d.completed.saturating_since(d.submitted).as_nanos()),
    }
}

/// [`client::OPS`] as a recording names them.
const RECORDED_OPS: [RecordedOp; client::OPS.len()] =
    [RecordedOp::Read, RecordedOp::Write, RecordedOp::Flush, RecordedOp::Trim, RecordedOp::WriteZeroes];

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
        LiveError::Device(firmware::hil::Status::WriteProtected) => Errno::Perm,
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

    /// Issue 17, item 5: with `--timing model` the device thread polls for a while after a
    /// reply (a QD1 client's next request comes 10-20 µs later; a wake-up from `ppoll` would
    /// start it later), and always when a deadline is near; `--timing none` sleeps when idle.
    #[test]
    fn the_device_thread_polls_after_a_reply_and_near_a_deadline() {
        use std::time::Duration;

        use super::{POLL_AFTER_REPLY, SLEEP_AT_LEAST, Timing, poll_instead_of_sleeping};
        let model = Timing::Model { dilation: 1.0 };
        let (long, us) = (Duration::from_millis(100), Duration::from_micros);
        assert!(poll_instead_of_sleeping(model, long, us(5)), "just after a reply");
        assert!(!poll_instead_of_sleeping(model, long, POLL_AFTER_REPLY), "after the window");
        assert!(!poll_instead_of_sleeping(Timing::None, long, us(5)), "functional timing sleeps when idle");
        for timing in [model, Timing::None] {
            assert!(poll_instead_of_sleeping(timing, SLEEP_AT_LEAST - us(1), long), "a near deadline");
            assert!(!poll_instead_of_sleeping(timing, SLEEP_AT_LEAST, long));
        }
    }
}
