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
//! Any number of connections, up to `ServeOptions::max_connections`, share the device's NVMe
//! queue pairs (`host::live::LiveHost`). Files: `serving.rs` starts and stops (listeners bound
//! before the image is opened), `device_thread.rs` is the loop above, `client.rs` what the clients
//! saw, `stats.rs` the stats line, `record.rs` the `--record` file, `console.rs` printing that
//! never fails.
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
//! Near a deadline, and for a moment after each reply (when a client at queue depth 1 sends
//! its next request), the loop polls its sockets instead of sleeping: a wake-up from `ppoll`
//! comes microseconds late. What a client measures is the modelled latency, the reply delay
//! the report gives (`live.lag_*`: modelled completion to reply written), and the NBD round
//! trip, which no device model includes; `scripts/bench-nbd model` measures all three.
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
mod device_thread;
mod record;
mod serving;
mod stats;

pub use client::live_summary;
pub use serving::{ServeOptions, Serving, Timing, start};
