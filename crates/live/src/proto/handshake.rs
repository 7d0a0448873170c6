//! Wire formats of the fixed newstyle handshake: the greeting, client flags, option requests
//! and replies, `NBD_REP_SERVER` entries and the `NBD_OPT_EXPORT_NAME` answer (the
//! `NBD_OPT_INFO` / `NBD_OPT_GO` payloads are in [`info`](super::info)).
//!
//! ```text
//! S: NBDMAGIC  IHAVEOPT  handshake-flags(16)
//! C: client-flags(32)
//! C: IHAVEOPT  option(32)  length(32)  data[length]                 (repeated)
//! S: 0x3e889045565a9  option(32)  reply-type(32)  length(32)  data   (one or more per option)
//! ```
//!
//! Encoders and decoders come in pairs (the decoders of server messages serve tests and
//! clients); decoders never panic, whatever the input.

use super::consts::*;
use super::flags::TransmissionFlags;
use super::wire::{Cursor, ProtoError, decode_string};

/// The client flags this server understands (`NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES`).
pub const KNOWN_CLIENT_FLAGS: u32 = FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES;

/// The server's first message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Greeting {
    /// Handshake flags (`NBD_FLAG_FIXED_NEWSTYLE`, `NBD_FLAG_NO_ZEROES`).
    pub flags: u16,
}

impl Greeting {
    /// The 18 bytes on the wire.
    pub fn encode(&self) -> [u8; GREETING_LEN] {
        let mut out = [0u8; GREETING_LEN];
        out[..8].copy_from_slice(&NBDMAGIC.to_be_bytes());
        out[8..16].copy_from_slice(&IHAVEOPT.to_be_bytes());
        out[16..].copy_from_slice(&self.flags.to_be_bytes());
        out
    }

    /// Parses a greeting, checking both magics.
    pub fn decode(buf: &[u8; GREETING_LEN]) -> Result<Greeting, ProtoError> {
        let mut c = Cursor::new(buf);
        expect_magic(c.u64("NBDMAGIC")?, NBDMAGIC)?;
        expect_magic(c.u64("IHAVEOPT")?, IHAVEOPT)?;
        Ok(Greeting { flags: c.u16("handshake flags")? })
    }
}

fn expect_magic(found: u64, expected: u64) -> Result<(), ProtoError> {
    if found == expected { Ok(()) } else { Err(ProtoError::BadMagic { expected, found }) }
}

/// An option code (`NBD_OPT_*`); codes this crate does not name are kept as `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NbdOption {
    /// `NBD_OPT_EXPORT_NAME` (1).
    ExportName,
    /// `NBD_OPT_ABORT` (2).
    Abort,
    /// `NBD_OPT_LIST` (3).
    List,
    /// `NBD_OPT_PEEK_EXPORT` (4, withdrawn).
    PeekExport,
    /// `NBD_OPT_STARTTLS` (5).
    StartTls,
    /// `NBD_OPT_INFO` (6).
    Info,
    /// `NBD_OPT_GO` (7).
    Go,
    /// `NBD_OPT_STRUCTURED_REPLY` (8).
    StructuredReply,
    /// `NBD_OPT_LIST_META_CONTEXT` (9).
    ListMetaContext,
    /// `NBD_OPT_SET_META_CONTEXT` (10).
    SetMetaContext,
    /// Any other code.
    Other(u32),
}

const OPTIONS: [(NbdOption, u32); 10] = [
    (NbdOption::ExportName, OPT_EXPORT_NAME),
    (NbdOption::Abort, OPT_ABORT),
    (NbdOption::List, OPT_LIST),
    (NbdOption::PeekExport, OPT_PEEK_EXPORT),
    (NbdOption::StartTls, OPT_STARTTLS),
    (NbdOption::Info, OPT_INFO),
    (NbdOption::Go, OPT_GO),
    (NbdOption::StructuredReply, OPT_STRUCTURED_REPLY),
    (NbdOption::ListMetaContext, OPT_LIST_META_CONTEXT),
    (NbdOption::SetMetaContext, OPT_SET_META_CONTEXT),
];

impl NbdOption {
    /// The option for a wire code.
    pub fn from_code(code: u32) -> NbdOption {
        OPTIONS.iter().find(|(_, c)| *c == code).map_or(NbdOption::Other(code), |(o, _)| *o)
    }

    /// The wire code.
    pub fn code(self) -> u32 {
        match self {
            NbdOption::Other(code) => code,
            known => OPTIONS.iter().find(|(o, _)| *o == known).map_or(0, |(_, c)| *c),
        }
    }
}

/// The fixed part of a client option: `IHAVEOPT`, option code, data length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionHeader {
    /// The option code as sent (see [`NbdOption::from_code`]).
    pub option: u32,
    /// Length of the option data that follows.
    pub length: u32,
}

impl OptionHeader {
    /// The 16 bytes on the wire.
    pub fn encode(&self) -> [u8; OPTION_HEADER_LEN] {
        let mut out = [0u8; OPTION_HEADER_LEN];
        out[..8].copy_from_slice(&IHAVEOPT.to_be_bytes());
        out[8..12].copy_from_slice(&self.option.to_be_bytes());
        out[12..].copy_from_slice(&self.length.to_be_bytes());
        out
    }

    /// Parses an option header, checking the `IHAVEOPT` magic.
    pub fn decode(buf: &[u8; OPTION_HEADER_LEN]) -> Result<OptionHeader, ProtoError> {
        let mut c = Cursor::new(buf);
        expect_magic(c.u64("IHAVEOPT")?, IHAVEOPT)?;
        Ok(OptionHeader { option: c.u32("option")?, length: c.u32("option length")? })
    }
}

/// An option reply type (`NBD_REP_*`); unnamed codes are kept as `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplyType {
    /// `NBD_REP_ACK`: the option succeeded / the list is complete.
    Ack,
    /// `NBD_REP_SERVER`: one export of an `NBD_OPT_LIST` answer.
    Server,
    /// `NBD_REP_INFO`: one item of information about an export.
    Info,
    /// `NBD_REP_META_CONTEXT` (never sent by this server).
    MetaContext,
    /// `NBD_REP_ERR_UNSUP`: the option is not supported.
    ErrUnsup,
    /// `NBD_REP_ERR_POLICY`: refused by server policy.
    ErrPolicy,
    /// `NBD_REP_ERR_INVALID`: syntactically or semantically invalid option.
    ErrInvalid,
    /// `NBD_REP_ERR_PLATFORM`: not supported on this platform.
    ErrPlatform,
    /// `NBD_REP_ERR_TLS_REQD`: TLS required first.
    ErrTlsReqd,
    /// `NBD_REP_ERR_UNKNOWN`: no such export.
    ErrUnknown,
    /// `NBD_REP_ERR_SHUTDOWN`: the server is shutting down.
    ErrShutdown,
    /// `NBD_REP_ERR_BLOCK_SIZE_REQD`: the client must request block sizes first.
    ErrBlockSizeReqd,
    /// `NBD_REP_ERR_TOO_BIG`: request or reply too large.
    ErrTooBig,
    /// Any other code.
    Other(u32),
}

const REPLY_TYPES: [(ReplyType, u32); 13] = [
    (ReplyType::Ack, REP_ACK),
    (ReplyType::Server, REP_SERVER),
    (ReplyType::Info, REP_INFO),
    (ReplyType::MetaContext, REP_META_CONTEXT),
    (ReplyType::ErrUnsup, REP_ERR_UNSUP),
    (ReplyType::ErrPolicy, REP_ERR_POLICY),
    (ReplyType::ErrInvalid, REP_ERR_INVALID),
    (ReplyType::ErrPlatform, REP_ERR_PLATFORM),
    (ReplyType::ErrTlsReqd, REP_ERR_TLS_REQD),
    (ReplyType::ErrUnknown, REP_ERR_UNKNOWN),
    (ReplyType::ErrShutdown, REP_ERR_SHUTDOWN),
    (ReplyType::ErrBlockSizeReqd, REP_ERR_BLOCK_SIZE_REQD),
    (ReplyType::ErrTooBig, REP_ERR_TOO_BIG),
];

impl ReplyType {
    /// The reply type for a wire code.
    pub fn from_code(code: u32) -> ReplyType {
        REPLY_TYPES.iter().find(|(_, c)| *c == code).map_or(ReplyType::Other(code), |(r, _)| *r)
    }

    /// The wire code.
    pub fn code(self) -> u32 {
        match self {
            ReplyType::Other(code) => code,
            known => REPLY_TYPES.iter().find(|(r, _)| *r == known).map_or(0, |(_, c)| *c),
        }
    }

    /// Whether this is an error reply (bit 31 set).
    pub fn is_error(self) -> bool {
        self.code() & REP_FLAG_ERROR != 0
    }
}

/// The fixed part of an option reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionReplyHeader {
    /// The option code this replies to, as the client sent it.
    pub option: u32,
    /// The reply type.
    pub reply: ReplyType,
    /// Length of the reply data that follows.
    pub length: u32,
}

impl OptionReplyHeader {
    /// The 20 bytes on the wire.
    pub fn encode(&self) -> [u8; OPTION_REPLY_HEADER_LEN] {
        let mut out = [0u8; OPTION_REPLY_HEADER_LEN];
        out[..8].copy_from_slice(&OPTION_REPLY_MAGIC.to_be_bytes());
        out[8..12].copy_from_slice(&self.option.to_be_bytes());
        out[12..16].copy_from_slice(&self.reply.code().to_be_bytes());
        out[16..].copy_from_slice(&self.length.to_be_bytes());
        out
    }

    /// Parses an option reply header, checking its magic.
    pub fn decode(buf: &[u8; OPTION_REPLY_HEADER_LEN]) -> Result<OptionReplyHeader, ProtoError> {
        let mut c = Cursor::new(buf);
        expect_magic(c.u64("option reply magic")?, OPTION_REPLY_MAGIC)?;
        Ok(OptionReplyHeader {
            option: c.u32("option")?,
            reply: ReplyType::from_code(c.u32("reply type")?),
            length: c.u32("reply length")?,
        })
    }
}

/// Appends one complete option reply (header and data) to `out`.
pub fn push_option_reply(out: &mut Vec<u8>, option: u32, reply: ReplyType, data: &[u8]) {
    let header = OptionReplyHeader { option, reply, length: data.len() as u32 };
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(data);
}

/// One `NBD_REP_SERVER` payload: an export name and optional details.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerEntry {
    /// The export name.
    pub name: String,
    /// Free text after the name (empty when absent).
    pub details: String,
}

impl ServerEntry {
    /// The reply data on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + self.name.len() + self.details.len());
        out.extend_from_slice(&(self.name.len() as u32).to_be_bytes());
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(self.details.as_bytes());
        out
    }

    /// Parses reply data; the name length must fit.
    pub fn decode(data: &[u8]) -> Result<ServerEntry, ProtoError> {
        let mut c = Cursor::new(data);
        let len = c.u32("name length")? as usize;
        let name = decode_string(c.bytes(len, "export name")?, "export name")?;
        let details = decode_string(c.rest(), "export details")?;
        Ok(ServerEntry { name, details })
    }
}

/// The answer to `NBD_OPT_EXPORT_NAME`: size, transmission flags and, unless the client
/// negotiated `NBD_FLAG_C_NO_ZEROES`, 124 zero bytes.
pub fn encode_export_name_reply(size: u64, flags: TransmissionFlags, no_zeroes: bool) -> Vec<u8> {
    let pad = if no_zeroes { 0 } else { EXPORT_NAME_ZEROES };
    let mut out = Vec::with_capacity(EXPORT_NAME_REPLY_LEN + pad);
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(&flags.bits().to_be_bytes());
    out.resize(EXPORT_NAME_REPLY_LEN + pad, 0);
    out
}

/// Parses the fixed part of an `NBD_OPT_EXPORT_NAME` answer into (size, flags).
pub fn decode_export_name_reply(buf: &[u8; EXPORT_NAME_REPLY_LEN]) -> (u64, TransmissionFlags) {
    let mut size = [0u8; 8];
    size.copy_from_slice(&buf[..8]);
    (u64::from_be_bytes(size), TransmissionFlags(u16::from_be_bytes([buf[8], buf[9]])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9:/._ -]{0,40}"
    }

    proptest! {
        #[test]
        fn greeting_round_trips(flags: u16) {
            let g = Greeting { flags };
            prop_assert_eq!(Greeting::decode(&g.encode()), Ok(g));
        }

        #[test]
        fn option_header_round_trips(option: u32, length: u32) {
            let h = OptionHeader { option, length };
            prop_assert_eq!(OptionHeader::decode(&h.encode()), Ok(h));
            prop_assert_eq!(NbdOption::from_code(option).code(), option);
        }

        #[test]
        fn option_reply_header_round_trips(option: u32, code: u32, length: u32) {
            let h = OptionReplyHeader { option, reply: ReplyType::from_code(code), length };
            prop_assert_eq!(OptionReplyHeader::decode(&h.encode()), Ok(h));
            prop_assert_eq!(ReplyType::from_code(code).code(), code);
            prop_assert_eq!(ReplyType::from_code(code).is_error(), code >= 1 << 31);
        }

        #[test]
        fn server_entries_round_trip(name in name(), details in name()) {
            let e = ServerEntry { name, details };
            prop_assert_eq!(ServerEntry::decode(&e.encode()), Ok(e));
        }

        #[test]
        fn export_name_reply_round_trips(size: u64, flags: u16, no_zeroes: bool) {
            let bytes = encode_export_name_reply(size, TransmissionFlags(flags), no_zeroes);
            prop_assert_eq!(bytes.len(), if no_zeroes { 10 } else { 134 });
            prop_assert!(bytes[10..].iter().all(|b| *b == 0));
            let head: [u8; 10] = bytes[..10].try_into().unwrap();
            prop_assert_eq!(decode_export_name_reply(&head), (size, TransmissionFlags(flags)));
        }

        #[test]
        fn decoders_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = ServerEntry::decode(&data);
        }
    }

    #[test]
    fn layouts_match_the_specification() {
        assert_eq!(&Greeting { flags: 3 }.encode()[..], b"NBDMAGICIHAVEOPT\x00\x03");
        let h = OptionHeader { option: OPT_GO, length: 0x0102 }.encode();
        assert_eq!(&h[..], b"IHAVEOPT\x00\x00\x00\x07\x00\x00\x01\x02");
        let mut out = Vec::new();
        push_option_reply(&mut out, OPT_LIST, ReplyType::ErrUnsup, b"x");
        assert_eq!(out, b"\x00\x03\xe8\x89\x04\x55\x65\xa9\x00\x00\x00\x03\x80\x00\x00\x01\x00\x00\x00\x01x");
    }
}
