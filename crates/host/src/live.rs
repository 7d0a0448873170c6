//! A host that does not generate its own I/O: requests arrive from outside (the NBD server's
//! connections, in `ssdlab serve`) and each is served as NVMe commands on the connection's own
//! queue pair, recorded like any run's (results, time series, per-request sink).
//!
//! The host runs inside the simulation: [`LiveHost::serve`] is a future for the simulation's
//! executor. Pacing against the wall clock is the caller's business.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use firmware::device::Device;
use firmware::hil::{AdminCommand, AdminResult, HostData, NvmeCommand, NvmeCompletion, Priority, Status};
use serde::{Deserialize, Serialize};
use sim::{SimDuration, SimTime, join_all};

use crate::run::{HostResults, RunError, RunOptions};
use crate::session::{Io, Session};
use crate::workload::IoOp;

/// What serving live did beyond the usual results: how the model kept pace with the wall
/// clock, how the image was opened, and the connections served. `wall_s` and `open_ms` are
/// wall-clock measurements; everything else follows from the requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveStats {
    /// `model` (completions released at their modelled time) or `none` (as fast as possible).
    pub timing: String,
    /// Model time runs this many times slower than the wall clock (`model` only).
    pub dilation: f64,
    /// The NAND image served.
    pub image: String,
    /// How the image was opened: `created`, `clean` (from the shutdown checkpoint) or
    /// `recovered: WHY` (from the OOB records).
    pub opened: String,
    /// Wall-clock milliseconds to open, scan and mount the image (the recovery time).
    pub open_ms: f64,
    /// Translation pages rewritten by recovery.
    pub translation_pages_rewritten: u32,
    /// Connections served.
    pub connections: u64,
    /// Connections refused (the connection limit was reached).
    #[serde(default)]
    pub refused_connections: u64,
    /// Requests answered (flushes included).
    pub requests: u64,
    /// Requests answered with an error, by the device or by the server.
    pub errors: u64,
    /// The errors by the NBD error the client got (`EINVAL`, `ENOSPC`, `EIO`, ...).
    #[serde(default)]
    pub errors_by_errno: BTreeMap<String, u64>,
    /// Per operation type (`read`, `write`, `flush`, `trim`, `write_zeroes`), what the clients
    /// saw in wall-clock time; only types that were requested.
    #[serde(default)]
    pub client: BTreeMap<String, ClientOpStats>,
    /// Wall-clock seconds served.
    pub wall_s: f64,
    /// Completions released later than their modelled time by more than 100 µs (`model`).
    pub late: u64,
    /// ... by more than 1 ms.
    pub late_1ms: u64,
    /// Mean delay of a reply, from its modelled completion time to the moment it was written
    /// to the client's socket, µs (`model`).
    pub lag_mean_us: f64,
    /// 99th percentile of that delay, µs.
    pub lag_p99_us: f64,
    /// Largest delay, µs.
    pub lag_max_us: f64,
}

/// One operation type as the clients saw it, in wall-clock time: each request from the moment
/// the server read it to the moment its reply was written to the socket.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientOpStats {
    /// Requests answered (errors included).
    pub count: u64,
    /// Requests answered with an error.
    pub errors: u64,
    /// Payload bytes of the successful requests.
    pub bytes: u64,
    /// Wall-clock seconds from the first request of this type to the last reply.
    pub active_s: f64,
    /// Requests per second over `active_s`; a lone request counts as one per second (not as
    /// the inverse of its latency).
    pub iops: f64,
    /// Megabytes (10^6 B) per second over the same time.
    pub mb_per_s: f64,
    /// Mean latency, µs.
    pub latency_mean_us: f64,
    /// Median latency, µs.
    pub latency_p50_us: f64,
    /// 99th percentile latency, µs.
    pub latency_p99_us: f64,
    /// Largest latency, µs.
    pub latency_max_us: f64,
}

/// What a request asks of the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveOp {
    /// Read `len` bytes.
    Read,
    /// Write these bytes (`len` of them).
    Write(Vec<u8>),
    /// Make every completed write durable.
    Flush,
    /// Deallocate the range (it may read back as anything written there before, or zeroes).
    Trim,
    /// Make the range read back as zeroes (written as zero data, so that it is as durable as
    /// any write).
    WriteZeroes,
}

/// One request: `len` bytes at byte `offset` (both multiples of the LBA size, checked by
/// [`LiveHost::serve`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveRequest {
    /// Byte offset.
    pub offset: u64,
    /// Bytes.
    pub len: u64,
    /// Force unit access: complete only once the data is on flash.
    pub fua: bool,
    /// The operation.
    pub op: LiveOp,
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// The request is malformed (misaligned, out of range, wrong data length).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The device reported a media or internal error.
    #[error("device error: {0:?}")]
    Device(Status),
}

/// Why a connection got no queue pair.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AttachError {
    /// As many connections as allowed are attached already.
    #[error("all {limit} connections allowed are open")]
    Full {
        /// The limit ([`LiveHost::limit_connections`]).
        limit: usize,
    },
    /// The device refused to create a queue pair.
    #[error("creating NVMe queue pair {qid} failed: {why}")]
    Queue {
        /// The queue pair.
        qid: u16,
        /// The device's answer.
        why: String,
    },
}

/// Connections allowed by default ([`LiveHost::limit_connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// The host side of a live device.
///
/// Connections share the device's queue pairs as threads share them under Linux blk-mq: any
/// number of connections (up to a limit) are spread over the queue pairs, each attached to
/// the one with the fewest connections (lowest id on a tie). A queue pair is created when its
/// first connection attaches and deleted when its last one detaches.
pub struct LiveHost {
    session: Rc<Session>,
    /// The device's NVMe controller (live serving drives one SSD).
    ctl: Rc<firmware::hil::Controller>,
    lba: u64,
    capacity: u64,
    max_transfer: u64,
    max_queues: u16,
    /// Connections per queue pair (index: queue id; 0 is the admin queue). Held while a queue
    /// pair is created or deleted, so that no connection uses one that is not there yet.
    queues: sim::sync::Mutex<Vec<u32>>,
    /// Connections attached or attaching.
    connections: Cell<usize>,
    max_connections: Cell<usize>,
    /// A request has arrived: the measured window starts at the first one, not when serving
    /// started (a server idle for a minute before its client connects is not a slow device).
    started: Cell<bool>,
}

impl LiveHost {
    /// Attaches to `dev` (no queue pairs yet: [`attach`](Self::attach) creates one per
    /// connection) and starts sampling the time series.
    pub fn open(dev: &Device, opts: &RunOptions) -> Result<Rc<LiveHost>, RunError> {
        let ctl = &dev.controller;
        let lba = ctl.lba_bytes() as u64;
        let host = &dev.platform.config.host;
        let session = Rc::new(Session::open(dev, 0, SimDuration::ZERO, opts)?);
        session.start_sampler(dev);
        Ok(Rc::new(LiveHost {
            session,
            ctl: ctl.clone(),
            lba,
            capacity: ctl.capacity_lbas() * lba,
            max_transfer: (host.max_transfer.bytes() / lba * lba).max(lba),
            max_queues: u16::try_from(host.queues).unwrap_or(u16::MAX).max(1),
            queues: sim::sync::Mutex::new(
                &dev.platform.sim.cx(),
                "live: queue pairs",
                vec![0; usize::from(u16::try_from(host.queues).unwrap_or(u16::MAX).max(1)) + 1],
            ),
            connections: Cell::new(0),
            max_connections: Cell::new(DEFAULT_MAX_CONNECTIONS),
            started: Cell::new(false),
        }))
    }

    /// The device's size in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The LBA size in bytes (the smallest request).
    pub fn lba_bytes(&self) -> u64 {
        self.lba
    }

    /// Queue pairs the device can give to connections.
    pub fn max_queues(&self) -> u16 {
        self.max_queues
    }

    /// Allows at most `limit` connections at a time (default [`DEFAULT_MAX_CONNECTIONS`]).
    pub fn limit_connections(&self, limit: usize) {
        self.max_connections.set(limit);
    }

    /// Attaches a new connection to the queue pair with the fewest connections (creating it
    /// if it has none) and returns its id, or says why the connection cannot be served.
    pub async fn attach(&self) -> Result<u16, AttachError> {
        let limit = self.max_connections.get();
        if self.connections.get() >= limit {
            return Err(AttachError::Full { limit });
        }
        self.connections.set(self.connections.get() + 1);
        let mut queues = self.queues.lock().await;
        let qid = (1..=self.max_queues).min_by_key(|&q| (queues[usize::from(q)], q)).expect("at least one");
        if queues[usize::from(qid)] == 0 {
            let created = self
                .ctl
                .admin(AdminCommand::CreateIoQueue { qid, priority: Priority::Medium, nvm_set: 0 })
                .await;
            if created != AdminResult::Done {
                self.connections.set(self.connections.get() - 1);
                return Err(AttachError::Queue { qid, why: format!("{created:?}") });
            }
        }
        queues[usize::from(qid)] += 1;
        let mut r = self.session.results.borrow_mut();
        r.queues = r.queues.max(u32::from(qid));
        r.clones = r.clones.max(u32::from(qid));
        Ok(qid)
    }

    /// Detaches a connection from queue pair `qid` (every request it sent has completed); the
    /// queue pair is deleted with its last connection.
    pub async fn detach(&self, qid: u16) {
        let mut queues = self.queues.lock().await;
        let Some(n) = queues.get_mut(usize::from(qid)).filter(|n| **n > 0) else { return };
        *n -= 1;
        if *n == 0 {
            self.ctl.admin(AdminCommand::DeleteIoQueue { qid }).await;
        }
        self.connections.set(self.connections.get() - 1);
    }

    /// Connections attached now.
    pub fn connections(&self) -> usize {
        self.connections.get()
    }

    /// Serves one request on queue pair `qid`: reads return their data. Requests longer than
    /// the device's maximum transfer become several commands, in flight together.
    pub async fn serve(&self, qid: u16, mut req: LiveRequest) -> Result<Option<Vec<u8>>, LiveError> {
        if !self.started.replace(true) {
            let now = self.session.cx.now();
            let mut r = self.session.results.borrow_mut();
            (r.window_start, r.window_end) = (now, now);
        }
        self.check(&req)?;
        let op = match req.op {
            LiveOp::Flush => {
                let c = self.ctl.submit(qid, NvmeCommand::flush()).await;
                return ok_or(c).map(|_| None);
            }
            LiveOp::Read => IoOp::Read,
            LiveOp::Write(_) | LiveOp::WriteZeroes => IoOp::Write,
            LiveOp::Trim => IoOp::Trim,
        };
        let chunks = (0..req.len).step_by(self.max_transfer as usize).map(|at| {
            let len = (req.len - at).min(self.max_transfer);
            (at, len)
        });
        // Write data per command: the request's own buffer when one command carries it all.
        let data: Vec<Vec<u8>> = match req.op {
            LiveOp::Write(ref mut d) if req.len <= self.max_transfer => vec![std::mem::take(d)],
            LiveOp::Write(ref d) => d.chunks(self.max_transfer as usize).map(<[u8]>::to_vec).collect(),
            _ => Vec::new(),
        };
        let mut data = data.into_iter();
        let commands = chunks.map(|(at, len)| {
            let (slba, nlb) = ((req.offset + at) / self.lba, (len / self.lba) as u32);
            let mut cmd = match &req.op {
                LiveOp::Read => NvmeCommand::read(slba, nlb),
                LiveOp::Write(_) => {
                    let bytes = data.next().expect("one buffer per command");
                    NvmeCommand::write(slba, nlb, HostData::Bytes(bytes))
                }
                LiveOp::WriteZeroes => NvmeCommand::write(slba, nlb, HostData::Bytes(vec![0; len as usize])),
                LiveOp::Trim => NvmeCommand::deallocate(vec![(slba, nlb)]),
                LiveOp::Flush => unreachable!("answered above"),
            };
            cmd.fua = req.fua && op == IoOp::Write;
            // No flows (live clients come and go): the totals only.
            let io = Io {
                clone: qid as u32 - 1,
                flow: u32::MAX,
                qid,
                op,
                offset: req.offset + at,
                len,
                placement: None,
            };
            async move { self.session.issue_command(&io, cmd, SimTime::ZERO).await }
        });
        let done = join_all(commands.collect::<Vec<_>>()).await;
        let mut data = Vec::with_capacity(if op == IoOp::Read { req.len as usize } else { 0 });
        for c in done {
            match ok_or(c)? {
                HostData::Bytes(b) if op == IoOp::Read => data.extend_from_slice(&b),
                _ if op == IoOp::Read => {
                    return Err(LiveError::Device(Status::InternalError(
                        "the device returned no read data (is the store metadata-only?)".into(),
                    )));
                }
                _ => {}
            }
        }
        Ok((op == IoOp::Read).then_some(data))
    }

    fn check(&self, r: &LiveRequest) -> Result<(), LiveError> {
        let bad = |why: String| Err(LiveError::Invalid(why));
        if r.op == LiveOp::Flush {
            return Ok(());
        }
        if r.len == 0 || !r.offset.is_multiple_of(self.lba) || !r.len.is_multiple_of(self.lba) {
            return bad(format!("{} bytes at {} are not whole {}-byte blocks", r.len, r.offset, self.lba));
        }
        if r.offset.checked_add(r.len).is_none_or(|end| end > self.capacity) {
            return bad(format!("{} bytes at {} go past the end ({} bytes)", r.len, r.offset, self.capacity));
        }
        if let LiveOp::Write(d) = &r.op
            && d.len() as u64 != r.len
        {
            return bad(format!("a write of {} bytes carries {} bytes of data", r.len, d.len()));
        }
        Ok(())
    }

    /// The results so far, with the series closed at the current time.
    pub fn finish(&self, dev: &Device) -> HostResults {
        self.session.finish(dev)
    }
}

fn ok_or(c: NvmeCompletion) -> Result<HostData, LiveError> {
    match c.status {
        Status::Success => Ok(c.data),
        s => Err(LiveError::Device(s)),
    }
}
