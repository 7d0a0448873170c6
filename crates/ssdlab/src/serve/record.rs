//! `ssdlab serve --record FILE`: every request answered, one line each in arrival order, in the
//! recording format of `host::trace::Recorded` (docs/record-replay.md).
//!
//! Off the request path: the device thread formats a request's line into a buffer when its
//! reply has been written (a few hundred nanoseconds, no system call) and hands the buffer to a
//! writer thread when it holds [`CHUNK_BYTES`], and once a second (the stats tick), so a kill
//! loses at most the last second or chunk. Requests complete out of order at queue depths
//! above one; a line waits in [`Recorder::done`] until every request that arrived before it is
//! answered, so the file is in arrival order (what a timed replay needs). On a clean shutdown
//! [`Recorder::finish`] writes the rest and syncs the file.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use anyhow::{Context, Result, anyhow};
use host::trace::{RECORDING_HEADER, Recorded};

/// The buffer is handed to the writer thread when it holds this many bytes (about 1,300
/// requests of 4 KiB).
const CHUNK_BYTES: usize = 64 * 1024;

/// The recording being written.
pub(super) struct Recorder {
    path: PathBuf,
    /// The arrival number the next request gets.
    next_arrival: u64,
    /// The arrival number of the next line to write.
    next_line: u64,
    /// Lines of requests answered before one that arrived earlier.
    waiting: BTreeMap<u64, Recorded>,
    buf: String,
    to_writer: Option<Sender<String>>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
}

impl Recorder {
    /// Creates `path` (a one-line error if it cannot be) and writes the header, with `about`
    /// (device, timing, seed) as a comment line after it.
    pub(super) fn create(path: &Path, about: &str) -> Result<Recorder> {
        let mut file = File::create(path)
            .with_context(|| format!("--record {}: cannot create the recording", path.display()))?;
        writeln!(file, "{RECORDING_HEADER}\n# {about}")
            .with_context(|| format!("--record {}: cannot write the recording", path.display()))?;
        let (to_writer, chunks) = channel::<String>();
        let writer = std::thread::Builder::new()
            .name("ssdlab-record".into())
            .spawn(move || {
                // After an error the chunks are still taken, so that the device thread never
                // waits; the first error is the answer.
                let mut result = Ok(());
                for chunk in chunks {
                    if result.is_ok() {
                        result = file.write_all(chunk.as_bytes());
                    }
                }
                result.and_then(|()| file.sync_all())
            })
            .context("starting the recording's writer thread")?;
        Ok(Recorder {
            path: path.to_path_buf(),
            next_arrival: 0,
            next_line: 0,
            waiting: BTreeMap::new(),
            buf: String::with_capacity(CHUNK_BYTES + 256),
            to_writer: Some(to_writer),
            writer: Some(writer),
        })
    }

    /// A request arrived: its arrival number, for [`done`](Self::done).
    pub(super) fn arrive(&mut self) -> u64 {
        self.next_arrival += 1;
        self.next_arrival - 1
    }

    /// The request that arrived `arrival`-th was answered.
    pub(super) fn done(&mut self, arrival: u64, line: Recorded) {
        if arrival != self.next_line {
            self.waiting.insert(arrival, line);
            return;
        }
        line.write(&mut self.buf);
        self.next_line += 1;
        while let Some(line) = self.waiting.remove(&self.next_line) {
            line.write(&mut self.buf);
            self.next_line += 1;
        }
        if self.buf.len() >= CHUNK_BYTES {
            self.hand_over();
        }
    }

    /// Hands what is buffered to the writer thread (the stats tick calls this once a second).
    pub(super) fn hand_over(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let chunk = std::mem::replace(&mut self.buf, String::with_capacity(CHUNK_BYTES + 256));
        if let Some(tx) = &self.to_writer {
            // The writer only goes away after `finish`.
            let _ = tx.send(chunk);
        }
    }

    /// Writes the rest, syncs the file and says how many requests it holds, or why it is
    /// incomplete.
    pub(super) fn finish(mut self) -> Result<u64> {
        // Every request is answered by now; lines still waiting (none, unless a request was
        // lost) go out in order.
        for (_, line) in std::mem::take(&mut self.waiting) {
            line.write(&mut self.buf);
        }
        self.hand_over();
        drop(self.to_writer.take());
        let written = self.writer.take().map(|w| w.join());
        match written {
            Some(Ok(Ok(()))) => Ok(self.next_arrival),
            Some(Ok(Err(e))) => Err(anyhow!("writing the recording {}: {e}", self.path.display())),
            _ => Err(anyhow!("the recording's writer thread failed ({})", self.path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use host::trace::RecordedOp;

    use super::*;

    fn line(t_ns: u64) -> Recorded {
        Recorded {
            t_ns,
            conn: 0,
            queue: 1,
            op: RecordedOp::Read,
            offset: 0,
            len: 4096,
            fua: false,
            error: None,
            latency_ns: 1,
            device_ns: Some(1),
        }
    }

    /// Lines answered out of order are written in arrival order, and the file reads back as a
    /// recording.
    #[test]
    fn lines_are_written_in_arrival_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.rec");
        let mut r = Recorder::create(&path, "test").unwrap();
        let ids: Vec<u64> = (0..5).map(|_| r.arrive()).collect();
        for &i in &[2u64, 0, 1, 4, 3] {
            r.done(ids[i as usize], line(i * 10));
        }
        assert_eq!(r.finish().unwrap(), 5);
        let text = std::fs::read_to_string(&path).unwrap();
        let reader = host::trace::TraceReader::open(&path, host::trace::ReadOptions::default()).unwrap();
        assert_eq!(reader.format(), host::trace::TraceFormat::Recording);
        let times: Vec<u64> = reader.map(|r| r.unwrap().time_ns.unwrap()).collect();
        assert_eq!(times, [0, 10, 20, 30, 40], "{text}");
    }

    #[test]
    fn a_recording_that_cannot_be_created_is_one_line() {
        let e = Recorder::create(Path::new("/nonexistent-dir/r.rec"), "x").err().unwrap();
        let msg = crate::message::one_line(e.as_ref());
        assert!(msg.starts_with("--record /nonexistent-dir/r.rec: cannot create the recording"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}
