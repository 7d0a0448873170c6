//! The NBD wire format, pure encode / decode with no I/O: constants, flags, handshake messages,
//! request headers and replies. Every decoder returns [`ProtoError`] on bad input and never
//! panics (fuzzed by `crates/live/fuzz`).

pub mod consts;
mod errno;
mod flags;
mod handshake;
mod info;
mod reply;
mod request;
mod wire;

pub use errno::Errno;
pub use flags::{CmdFlags, TransmissionFlags};
pub use handshake::{
    Greeting, KNOWN_CLIENT_FLAGS, NbdOption, OptionHeader, OptionReplyHeader, ReplyType, ServerEntry,
    decode_export_name_reply, encode_export_name_reply, push_option_reply,
};
pub use info::{Info, InfoRequest};
pub use reply::{
    ChunkHeader, ErrorChunk, SimpleReplyHeader, push_data_chunk_head, push_error_chunk, push_none_chunk,
    push_simple_reply,
};
pub use request::{Command, RequestHeader};
pub use wire::{Cursor, ProtoError, decode_string};
