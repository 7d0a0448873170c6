//! Transmission replies: simple replies and structured reply chunks.
//!
//! ```text
//! simple:      S: 0x67446698  error(32)  cookie(64)  [data if a successful READ]
//! structured:  S: 0x668e33ef  flags(16)  type(16)  cookie(64)  length(32)  payload[length]
//!   OFFSET_DATA payload: offset(64) data      ERROR payload: error(32) msg-len(16) msg
//! ```

use super::consts::*;
use super::errno::Errno;
use super::wire::{Cursor, ProtoError, decode_string};

/// The header of a simple reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimpleReplyHeader {
    /// 0 on success, else an NBD error value.
    pub error: u32,
    /// The request's cookie.
    pub cookie: u64,
}

impl SimpleReplyHeader {
    /// The 16 bytes on the wire.
    pub fn encode(&self) -> [u8; SIMPLE_REPLY_HEADER_LEN] {
        let mut out = [0u8; SIMPLE_REPLY_HEADER_LEN];
        out[..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
        out[4..8].copy_from_slice(&self.error.to_be_bytes());
        out[8..].copy_from_slice(&self.cookie.to_be_bytes());
        out
    }

    /// Parses a simple reply header, checking its magic.
    pub fn decode(buf: &[u8; SIMPLE_REPLY_HEADER_LEN]) -> Result<SimpleReplyHeader, ProtoError> {
        let mut c = Cursor::new(buf);
        let magic = c.u32("simple reply magic")?;
        if magic != SIMPLE_REPLY_MAGIC {
            return Err(ProtoError::BadMagic { expected: SIMPLE_REPLY_MAGIC.into(), found: magic.into() });
        }
        Ok(SimpleReplyHeader { error: c.u32("error")?, cookie: c.u64("cookie")? })
    }
}

/// The header of a structured reply chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Reply flags (`NBD_REPLY_FLAG_DONE`).
    pub flags: u16,
    /// Chunk type (`NBD_REPLY_TYPE_*`).
    pub kind: u16,
    /// The request's cookie.
    pub cookie: u64,
    /// Payload length.
    pub length: u32,
}

impl ChunkHeader {
    /// The 20 bytes on the wire.
    pub fn encode(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut out = [0u8; CHUNK_HEADER_LEN];
        out[..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
        out[4..6].copy_from_slice(&self.flags.to_be_bytes());
        out[6..8].copy_from_slice(&self.kind.to_be_bytes());
        out[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        out[16..].copy_from_slice(&self.length.to_be_bytes());
        out
    }

    /// Parses a chunk header, checking its magic.
    pub fn decode(buf: &[u8; CHUNK_HEADER_LEN]) -> Result<ChunkHeader, ProtoError> {
        let mut c = Cursor::new(buf);
        let magic = c.u32("structured reply magic")?;
        if magic != STRUCTURED_REPLY_MAGIC {
            return Err(ProtoError::BadMagic {
                expected: STRUCTURED_REPLY_MAGIC.into(),
                found: magic.into(),
            });
        }
        Ok(ChunkHeader {
            flags: c.u16("reply flags")?,
            kind: c.u16("reply type")?,
            cookie: c.u64("cookie")?,
            length: c.u32("length")?,
        })
    }

    /// Whether this is the final chunk of its reply.
    pub fn is_done(&self) -> bool {
        self.flags & REPLY_FLAG_DONE != 0
    }
}

/// Appends a simple reply header (`error` 0 = success).
pub fn push_simple_reply(out: &mut Vec<u8>, cookie: u64, error: Option<Errno>) {
    let error = error.map_or(0, Errno::code);
    out.extend_from_slice(&SimpleReplyHeader { error, cookie }.encode());
}

/// Appends the header and offset of a final `NBD_REPLY_TYPE_OFFSET_DATA` chunk; the caller sends
/// the `data_len` data bytes right after. `data_len` must be at least 1 and at most 2^32 - 9.
pub fn push_data_chunk_head(out: &mut Vec<u8>, cookie: u64, offset: u64, data_len: u32) {
    let header =
        ChunkHeader { flags: REPLY_FLAG_DONE, kind: REPLY_TYPE_OFFSET_DATA, cookie, length: data_len + 8 };
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(&offset.to_be_bytes());
}

/// Appends a final `NBD_REPLY_TYPE_NONE` chunk (success without data).
pub fn push_none_chunk(out: &mut Vec<u8>, cookie: u64) {
    let header = ChunkHeader { flags: REPLY_FLAG_DONE, kind: REPLY_TYPE_NONE, cookie, length: 0 };
    out.extend_from_slice(&header.encode());
}

/// Appends a final `NBD_REPLY_TYPE_ERROR` chunk with a message for humans (cut at 4096 bytes).
pub fn push_error_chunk(out: &mut Vec<u8>, cookie: u64, error: Errno, message: &str) {
    let mut msg = &message.as_bytes()[..message.len().min(MAX_STRING_LEN)];
    while std::str::from_utf8(msg).is_err() {
        msg = &msg[..msg.len() - 1];
    }
    let header =
        ChunkHeader { flags: REPLY_FLAG_DONE, kind: REPLY_TYPE_ERROR, cookie, length: 6 + msg.len() as u32 };
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(&error.code().to_be_bytes());
    out.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    out.extend_from_slice(msg);
}

/// The payload of an error chunk (`NBD_REPLY_TYPE_ERROR` or `NBD_REPLY_TYPE_ERROR_OFFSET`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorChunk {
    /// The error value (nonzero).
    pub error: u32,
    /// The message for humans.
    pub message: String,
    /// The offset of an `NBD_REPLY_TYPE_ERROR_OFFSET` chunk.
    pub offset: Option<u64>,
}

impl ErrorChunk {
    /// Parses an error chunk payload of the given chunk type.
    pub fn decode(kind: u16, payload: &[u8]) -> Result<ErrorChunk, ProtoError> {
        let mut c = Cursor::new(payload);
        let error = c.u32("error")?;
        let len = c.u16("message length")? as usize;
        let message = decode_string(c.bytes(len, "error message")?, "error message")?;
        let offset = if kind == REPLY_TYPE_ERROR_OFFSET { Some(c.u64("error offset")?) } else { None };
        if kind != REPLY_TYPE_ERROR && kind != REPLY_TYPE_ERROR_OFFSET {
            // Unknown error types may carry further fields; the message is all we interpret.
            c.rest();
        }
        c.finish("error chunk")?;
        if error == 0 {
            return Err(ProtoError::BadLength { what: "error chunk error value", len: 0 });
        }
        Ok(ErrorChunk { error, message, offset })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn simple_header_round_trips(error: u32, cookie: u64) {
            let h = SimpleReplyHeader { error, cookie };
            prop_assert_eq!(SimpleReplyHeader::decode(&h.encode()), Ok(h));
        }

        #[test]
        fn chunk_header_round_trips(flags: u16, kind: u16, cookie: u64, length: u32) {
            let h = ChunkHeader { flags, kind, cookie, length };
            prop_assert_eq!(ChunkHeader::decode(&h.encode()), Ok(h));
        }

        #[test]
        fn error_chunks_round_trip(cookie: u64, idx in 0usize..8, message in "[ -~]{0,80}") {
            let errno = Errno::ALL[idx];
            let mut out = Vec::new();
            push_error_chunk(&mut out, cookie, errno, &message);
            let header = ChunkHeader::decode(out[..20].try_into().unwrap()).unwrap();
            prop_assert!(header.is_done());
            prop_assert_eq!(header.length as usize, out.len() - 20);
            let chunk = ErrorChunk::decode(header.kind, &out[20..]).unwrap();
            prop_assert_eq!(chunk, ErrorChunk { error: errno.code(), message, offset: None });
        }

        #[test]
        fn error_chunk_decode_never_panics(kind: u16, payload in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = ErrorChunk::decode(kind, &payload);
        }
    }

    #[test]
    fn layouts_match_the_specification() {
        let mut out = Vec::new();
        push_simple_reply(&mut out, 7, Some(Errno::Inval));
        assert_eq!(out, [0x67, 0x44, 0x66, 0x98, 0, 0, 0, 22, 0, 0, 0, 0, 0, 0, 0, 7]);
        out.clear();
        push_data_chunk_head(&mut out, 9, 0x200, 512);
        assert_eq!(&out[..8], &[0x66, 0x8e, 0x33, 0xef, 0, 1, 0, 1]);
        assert_eq!(&out[16..20], &(520u32).to_be_bytes());
        assert_eq!(&out[20..], &0x200u64.to_be_bytes());
        out.clear();
        push_none_chunk(&mut out, 9);
        assert_eq!(&out[4..8], &[0, 1, 0, 0]);
        out.clear();
        push_error_chunk(&mut out, 9, Errno::Io, "é".repeat(3000).as_str());
        let header = ChunkHeader::decode(out[..20].try_into().unwrap()).unwrap();
        assert_eq!((header.kind, header.length), (0x8001, 6 + 4096));
    }
}
