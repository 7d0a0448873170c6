//! The server side of the fixed newstyle handshake, as a state machine over any byte stream
//! (so tests and the fuzzer drive it with byte scripts).
//!
//! How each client message is answered:
//!
//! | client sends                               | server answers                                  |
//! |--------------------------------------------|-------------------------------------------------|
//! | client flags with unknown bits             | hard disconnect (the spec says MUST)            |
//! | option without the `IHAVEOPT` magic        | hard disconnect (the stream cannot be trusted)  |
//! | option with more than 1 MiB of data        | hard disconnect (denial of service)             |
//! | unsupported option (STARTTLS, meta contexts, anything unknown) | data skipped, `NBD_REP_ERR_UNSUP` |
//! | supported option with more than 64 KiB     | data skipped, `NBD_REP_ERR_TOO_BIG`             |
//! | `EXPORT_NAME` known                        | size, flags (+124 zeroes unless NO_ZEROES); transmission |
//! | `EXPORT_NAME` unknown / bad name / >4 KiB  | hard disconnect (this option cannot fail)        |
//! | `LIST` (no data)                           | one `NBD_REP_SERVER` per export, `NBD_REP_ACK`  |
//! | `LIST` with data                           | `NBD_REP_ERR_INVALID`                           |
//! | `INFO` / `GO` malformed                    | `NBD_REP_ERR_INVALID`                           |
//! | `INFO` / `GO` unknown export               | `NBD_REP_ERR_UNKNOWN`                           |
//! | `INFO` / `GO` known                        | `NBD_INFO_EXPORT`, `NBD_INFO_BLOCK_SIZE` (+ name, description if asked), `NBD_REP_ACK`; after `GO`, transmission |
//! | `GO` refused by the backend                | `NBD_REP_ERR_UNKNOWN` / `NBD_REP_ERR_POLICY`    |
//! | `STRUCTURED_REPLY` (no data, first time)   | `NBD_REP_ACK`; otherwise `NBD_REP_ERR_INVALID`  |
//! | `ABORT`                                    | `NBD_REP_ACK`, then close                       |
//! | any option but `ABORT` while shutting down | `NBD_REP_ERR_SHUTDOWN`                          |

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use thiserror::Error;

use crate::backend::{Backend, BackendError};
use crate::export::ExportInfo;
use crate::proto::consts::{
    CLIENT_FLAGS_LEN, FLAG_C_NO_ZEROES, FLAG_FIXED_NEWSTYLE, FLAG_NO_ZEROES, INFO_DESCRIPTION, INFO_NAME,
    MAX_STRING_LEN, OPTION_HEADER_LEN,
};
use crate::proto::{
    Greeting, Info, InfoRequest, KNOWN_CLIENT_FLAGS, NbdOption, OptionHeader, ProtoError, ReplyType,
    ServerEntry, decode_string, encode_export_name_reply, push_option_reply,
};
use crate::transmission::Session;

/// Option data beyond which the server hangs up instead of skipping it.
pub const OPTION_HARD_LIMIT: u32 = 1 << 20;
/// Largest option data a supported option may carry; longer ones get `NBD_REP_ERR_TOO_BIG`.
pub const MAX_OPTION_DATA: u32 = 64 << 10;

/// A finished handshake.
#[derive(Debug)]
pub enum Outcome<C> {
    /// The client entered transmission on an export.
    Transmission(Negotiated<C>),
    /// The client sent `NBD_OPT_ABORT`.
    Aborted,
}

/// What transmission runs with.
#[derive(Debug)]
pub struct Negotiated<C> {
    /// The backend's connection state.
    pub conn: C,
    /// The export as the backend described it.
    pub export: ExportInfo,
    /// The negotiated parameters.
    pub session: Session,
}

/// Why a handshake ended without transmission (the connection is then closed).
#[derive(Debug, Error)]
pub enum HandshakeError {
    /// The connection failed or closed.
    #[error("i/o during handshake: {0}")]
    Io(#[from] io::Error),
    /// The client set flags the server does not know.
    #[error("unknown client flags {0:#x}")]
    ClientFlags(u32),
    /// An option header was malformed.
    #[error("malformed option: {0}")]
    Malformed(#[from] ProtoError),
    /// An option carried more data than the server accepts.
    #[error("option {option} carries {length} bytes")]
    OptionTooLarge {
        /// The option code.
        option: u32,
        /// Its data length.
        length: u32,
    },
    /// `NBD_OPT_EXPORT_NAME` named no usable export (this option cannot return an error).
    #[error("NBD_OPT_EXPORT_NAME refused: {0}")]
    ExportName(String),
}

/// Runs the handshake on `io` until the client enters transmission, aborts, or breaks the
/// protocol. `max_request` (a power of two >= 64 KiB) caps the advertised maximum block size;
/// once `shutting_down` is set, options are refused with `NBD_REP_ERR_SHUTDOWN`.
pub fn negotiate<S: Read + Write, B: Backend>(
    io: &mut S,
    backend: &B,
    max_request: u32,
    shutting_down: &AtomicBool,
) -> Result<Outcome<B::Conn>, HandshakeError> {
    io.write_all(&Greeting { flags: FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES }.encode())?;
    io.flush()?;
    let mut flags = [0u8; CLIENT_FLAGS_LEN];
    io.read_exact(&mut flags)?;
    let client_flags = u32::from_be_bytes(flags);
    if client_flags & !KNOWN_CLIENT_FLAGS != 0 {
        return Err(HandshakeError::ClientFlags(client_flags));
    }
    let mut state = State { no_zeroes: client_flags & FLAG_C_NO_ZEROES != 0, structured: false, max_request };
    loop {
        let mut header = [0u8; OPTION_HEADER_LEN];
        io.read_exact(&mut header)?;
        let OptionHeader { option: code, length } = OptionHeader::decode(&header)?;
        if length > OPTION_HARD_LIMIT {
            return Err(HandshakeError::OptionTooLarge { option: code, length });
        }
        let option = NbdOption::from_code(code);
        let mut out = Vec::new();
        let supported = matches!(
            option,
            NbdOption::ExportName
                | NbdOption::Abort
                | NbdOption::List
                | NbdOption::Info
                | NbdOption::Go
                | NbdOption::StructuredReply
        );
        if !supported || length > MAX_OPTION_DATA {
            if option == NbdOption::ExportName {
                return Err(HandshakeError::ExportName(format!("{length}-byte name")));
            }
            skip(io, length)?;
            let (reply, msg) = if supported {
                (ReplyType::ErrTooBig, "option data too large")
            } else {
                (ReplyType::ErrUnsup, "")
            };
            push_option_reply(&mut out, code, reply, msg.as_bytes());
            send(io, &out)?;
            continue;
        }
        let mut data = vec![0u8; length as usize];
        io.read_exact(&mut data)?;
        if option == NbdOption::Abort {
            push_option_reply(&mut out, code, ReplyType::Ack, &[]);
            let _ = send(io, &out); // the client may already have gone, as the spec allows
            return Ok(Outcome::Aborted);
        }
        if shutting_down.load(Ordering::SeqCst) {
            if option == NbdOption::ExportName {
                return Err(HandshakeError::ExportName("server shutting down".into()));
            }
            push_option_reply(&mut out, code, ReplyType::ErrShutdown, b"server shutting down");
            send(io, &out)?;
            continue;
        }
        let done = match option {
            NbdOption::ExportName => Some(state.export_name(backend, &data, &mut out)?),
            NbdOption::List => {
                state.list(backend, code, &data, &mut out);
                None
            }
            NbdOption::StructuredReply => {
                let reply =
                    if data.is_empty() && !state.structured { ReplyType::Ack } else { ReplyType::ErrInvalid };
                state.structured |= reply == ReplyType::Ack;
                push_option_reply(&mut out, code, reply, &[]);
                None
            }
            _ => state.info_or_go(backend, code, option == NbdOption::Go, &data, &mut out),
        };
        if let Err(e) = send(io, &out) {
            // The backend attached a connection the client will never use.
            if let Some(negotiated) = done {
                backend.disconnect(negotiated.conn);
            }
            return Err(e.into());
        }
        if let Some(negotiated) = done {
            return Ok(Outcome::Transmission(negotiated));
        }
    }
}

struct State {
    no_zeroes: bool,
    structured: bool,
    max_request: u32,
}

impl State {
    fn session(&self, export: &ExportInfo) -> Session {
        Session {
            size: export.size,
            flags: export.flags(self.structured),
            block_size: export.block_size.capped(self.max_request),
            structured: self.structured,
        }
    }

    fn export_name<B: Backend>(
        &self,
        backend: &B,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Negotiated<B::Conn>, HandshakeError> {
        let refuse = |why: String| HandshakeError::ExportName(why);
        if data.len() > MAX_STRING_LEN {
            return Err(refuse(format!("{}-byte name", data.len())));
        }
        let name = decode_string(data, "export name")?;
        let export = backend.export(&name).ok_or_else(|| refuse(format!("unknown export {name:?}")))?;
        let conn = backend.connect(&export).map_err(|e| refuse(e.to_string()))?;
        let session = self.session(&export);
        out.extend(encode_export_name_reply(session.size, session.flags, self.no_zeroes));
        Ok(Negotiated { conn, export, session })
    }

    fn list<B: Backend>(&self, backend: &B, code: u32, data: &[u8], out: &mut Vec<u8>) {
        if !data.is_empty() {
            push_option_reply(out, code, ReplyType::ErrInvalid, b"NBD_OPT_LIST takes no data");
            return;
        }
        for name in backend.list() {
            let entry = ServerEntry { name, details: String::new() };
            push_option_reply(out, code, ReplyType::Server, &entry.encode());
        }
        push_option_reply(out, code, ReplyType::Ack, &[]);
    }

    fn info_or_go<B: Backend>(
        &self,
        backend: &B,
        code: u32,
        go: bool,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Negotiated<B::Conn>> {
        let request = match InfoRequest::decode(data) {
            Ok(r) => r,
            Err(e) => {
                push_option_reply(out, code, ReplyType::ErrInvalid, e.to_string().as_bytes());
                return None;
            }
        };
        let Some(export) = backend.export(&request.name) else {
            let msg = format!("unknown export {:?}", request.name);
            push_option_reply(out, code, ReplyType::ErrUnknown, msg.as_bytes());
            return None;
        };
        let conn = if go {
            match backend.connect(&export) {
                Ok(conn) => Some(conn),
                Err(e) => {
                    let reply = match e {
                        BackendError::UnknownExport(_) => ReplyType::ErrUnknown,
                        BackendError::Unavailable(_) => ReplyType::ErrPolicy,
                    };
                    push_option_reply(out, code, reply, e.to_string().as_bytes());
                    return None;
                }
            }
        } else {
            None
        };
        let session = self.session(&export);
        let b = session.block_size;
        let mut infos = vec![
            Info::Export { size: session.size, flags: session.flags },
            Info::BlockSize { min: b.min(), preferred: b.preferred(), max: b.max() },
        ];
        if request.requests.contains(&INFO_NAME) {
            infos.push(Info::Name(export.name.clone()));
        }
        if let (true, Some(d)) = (request.requests.contains(&INFO_DESCRIPTION), &export.description) {
            infos.push(Info::Description(d.clone()));
        }
        for info in infos {
            push_option_reply(out, code, ReplyType::Info, &info.encode());
        }
        push_option_reply(out, code, ReplyType::Ack, &[]);
        conn.map(|conn| Negotiated { conn, export, session })
    }
}

fn send<S: Write>(io: &mut S, bytes: &[u8]) -> io::Result<()> {
    io.write_all(bytes)?;
    io.flush()
}

fn skip<S: Read>(io: &mut S, len: u32) -> io::Result<()> {
    let copied = io::copy(&mut io.by_ref().take(len.into()), &mut io::sink())?;
    if copied < u64::from(len) { Err(io::ErrorKind::UnexpectedEof.into()) } else { Ok(()) }
}

#[cfg(test)]
mod tests;
