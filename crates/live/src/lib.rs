//! # ssdlab-live: serving a simulated SSD as a real block device
//!
//! ```text
//!   fio / qemu / nbdcopy / kernel nbd
//!            |  NBD over TCP (loopback) or a Unix socket
//!            v
//!   [ this crate: handshake -> reader -> Backend::submit ]      (the only crate with sockets)
//!            |                                   ^
//!            v                                   | Replier (any thread, any order)
//!   Backend: MemoryBackend, or the simulated device: HIL (NVMe) -> FTL -> FIL -> NAND
//! ```
//!
//! The NBD protocol and server. [`proto`] is the wire format (pure encode / decode, checked
//! against `doc/proto.md` of the NetworkBlockDevice/nbd project); [`negotiate`] is the fixed
//! newstyle handshake as a state machine over any byte stream; [`transmission`] validates and
//! reads requests and writes replies; [`Server`] listens, accepts and runs connections; a
//! [`Backend`] stores the data — [`MemoryBackend`] in memory, the simulator through its adapter.
//!
//! ## Threads of one connection
//!
//! 1. The connection thread runs the handshake, then becomes the **reader**: it parses requests
//!    (pipelined: it keeps reading while earlier ones are in flight, up to a budget), answers
//!    invalid ones itself and calls [`Backend::submit`] for the rest, in wire order.
//! 2. The backend completes each request through its [`Replier`] from any thread, in any order.
//! 3. The **writer** thread sends replies as they arrive, matched by cookie, several per system
//!    call, each reply's header and payload in the same write.
//!
//! A backend with an event loop of its own (the simulator: one thread owns the device) can
//! instead take each connection over after the handshake ([`Backend::polls`],
//! [`Backend::adopt`]) and drive it as a [`Polled`] connection: non-blocking reads and writes
//! on the loop's thread, with the same validation, budget and ordering rules, and no thread
//! hand-off per request.
//!
//! ## Ordering rules
//!
//! 1. A request reaches the backend only after validation ([`transmission::validate`]); the
//!    backend never sees an out-of-range, misaligned, oversized, empty or unadvertised request.
//! 2. Replies go out in completion order, not request order.
//! 3. A connection ends only after every request it submitted was answered; only then is
//!    [`Backend::disconnect`] called.
//! 4. Flush and FUA durability are the backend's to honour (see [`Op::Flush`], [`Request::fua`]).

mod backend;
mod export;
mod memory;
pub mod negotiate;
pub mod proto;
mod server;
pub mod transmission;

pub use backend::{Backend, BackendError, Op, Replier, ReplyResult, Request};
pub use export::{BlockSize, BlockSizeError, ExportInfo};
pub use memory::{CHUNK_SIZE, MemoryBackend};
pub use server::{
    Bound, ConfigError, ListenAddr, Polled, Server, ServerConfig, ServerError, ServerStats, Stream,
};
