//! Turning a finished request into the bytes of its reply: a simple reply, or with structured
//! replies an `OFFSET_DATA` / `NONE` / `ERROR` chunk.

use std::sync::Arc;

use crate::backend::ReplyResult;
use crate::proto::{Errno, push_data_chunk_head, push_error_chunk, push_none_chunk, push_simple_reply};

/// A finished request on its way to the socket.
#[derive(Debug)]
pub(crate) struct Completion {
    /// The client's cookie.
    pub(crate) cookie: u64,
    /// `Some((offset, length))` for reads: the data length is checked against it.
    pub(crate) read: Option<(u64, u32)>,
    /// Bytes charged to the connection's in-flight budget, returned once the reply is sent.
    pub(crate) charge: u64,
    /// The outcome.
    pub(crate) result: ReplyResult,
    /// A message for humans in structured error replies.
    pub(crate) message: &'static str,
}

/// Where a finished request's completion goes: a threaded connection's outbox or a polled
/// connection's queue.
pub(crate) trait Deliver: Send + Sync {
    /// Takes one completion (from any thread).
    fn deliver(&self, c: Completion);
}

/// The promise to deliver one completion.
pub(crate) struct Route {
    to: Arc<dyn Deliver>,
    cookie: u64,
    read: Option<(u64, u32)>,
    charge: u64,
}

impl Route {
    pub(crate) fn new(to: Arc<dyn Deliver>, cookie: u64, read: Option<(u64, u32)>, charge: u64) -> Route {
        Route { to, cookie, read, charge }
    }

    /// Hands the reply on (exactly once: this consumes the route).
    pub(crate) fn deliver(self, result: ReplyResult, message: &'static str) {
        let Route { to, cookie, read, charge } = self;
        to.deliver(Completion { cookie, read, charge, result, message });
    }
}

/// Appends the reply header(s) for `c` to `heads` and returns the payload to send after them.
/// A read answered with the wrong amount of data becomes `EIO`: the wire must never carry a
/// length the client did not ask for.
pub(crate) fn frame(c: Completion, structured: bool, heads: &mut Vec<u8>) -> Option<Vec<u8>> {
    let (result, message) = match (c.read, c.result) {
        (Some((_, len)), Ok(Some(data))) if data.len() == len as usize => (Ok(Some(data)), c.message),
        (Some((_, 0)), Ok(None)) => (Ok(None), c.message),
        (Some(_), Ok(_)) => (Err(Errno::Io), "backend returned a wrong read length"),
        (None, Ok(_)) => (Ok(None), c.message),
        (_, Err(e)) => (Err(e), c.message),
    };
    match (result, structured) {
        (Ok(data), false) => {
            push_simple_reply(heads, c.cookie, None);
            data.filter(|d| !d.is_empty())
        }
        (Ok(Some(data)), true) if !data.is_empty() => {
            let offset = c.read.map_or(0, |(o, _)| o);
            push_data_chunk_head(heads, c.cookie, offset, data.len() as u32);
            Some(data)
        }
        (Ok(_), true) if c.read.is_some() => {
            push_none_chunk(heads, c.cookie);
            None
        }
        (Ok(_), true) => {
            // Structured replies allow a simple reply for data-less successes.
            push_simple_reply(heads, c.cookie, None);
            None
        }
        (Err(e), false) => {
            push_simple_reply(heads, c.cookie, Some(e));
            None
        }
        (Err(e), true) => {
            let text = if message.is_empty() { e.to_string() } else { message.to_string() };
            push_error_chunk(heads, c.cookie, e, &text);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{ChunkHeader, ErrorChunk, SimpleReplyHeader};

    fn completion(cookie: u64, read: Option<(u64, u32)>, result: ReplyResult) -> Completion {
        Completion { cookie, read, charge: read.map_or(0, |(_, l)| l.into()), result, message: "" }
    }

    fn framed(c: Completion, structured: bool) -> Vec<u8> {
        let mut heads = Vec::new();
        let payload = frame(c, structured, &mut heads);
        heads.extend(payload.unwrap_or_default());
        heads
    }

    fn simple(bytes: &[u8]) -> SimpleReplyHeader {
        SimpleReplyHeader::decode(bytes[..16].try_into().unwrap()).unwrap()
    }

    fn chunk(bytes: &[u8]) -> ChunkHeader {
        ChunkHeader::decode(bytes[..20].try_into().unwrap()).unwrap()
    }

    #[test]
    fn simple_replies() {
        let out = framed(completion(5, Some((0, 3)), Ok(Some(vec![1, 2, 3]))), false);
        assert_eq!((simple(&out), &out[16..]), (SimpleReplyHeader { error: 0, cookie: 5 }, &[1u8, 2, 3][..]));
        let out = framed(completion(6, None, Ok(None)), false);
        assert_eq!((simple(&out).error, out.len()), (0, 16));
        let out = framed(completion(7, Some((0, 3)), Err(Errno::Io)), false);
        assert_eq!((simple(&out).error, out.len()), (5, 16));
        // A short read from the backend is answered EIO, with no data.
        let out = framed(completion(8, Some((0, 3)), Ok(Some(vec![1]))), false);
        assert_eq!((simple(&out).error, out.len()), (5, 16));
        let out = framed(completion(9, Some((0, 0)), Ok(None)), false);
        assert_eq!((simple(&out).error, out.len()), (0, 16));
    }

    #[test]
    fn structured_replies() {
        let out = framed(completion(5, Some((4096, 2)), Ok(Some(vec![8, 9]))), true);
        let h = chunk(&out);
        assert_eq!((h.kind, h.flags, h.cookie, h.length), (1, 1, 5, 10));
        assert_eq!(&out[20..28], &4096u64.to_be_bytes());
        assert_eq!(&out[28..], &[8, 9]);
        let out = framed(completion(6, Some((0, 0)), Ok(Some(vec![]))), true);
        assert_eq!((chunk(&out).kind, chunk(&out).flags, out.len()), (0, 1, 20));
        let mut c = completion(7, Some((0, 2)), Err(Errno::Inval));
        c.message = "nope";
        let out = framed(c, true);
        let h = chunk(&out);
        assert_eq!((h.kind, h.flags, h.cookie), (0x8001, 1, 7));
        let e = ErrorChunk::decode(h.kind, &out[20..]).unwrap();
        assert_eq!((e.error, e.message.as_str()), (22, "nope"));
        let out = framed(completion(8, None, Ok(None)), true);
        assert_eq!(simple(&out), SimpleReplyHeader { error: 0, cookie: 8 });
    }
}
