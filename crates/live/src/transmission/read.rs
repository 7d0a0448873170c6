//! Reading requests off the wire: one header, its validation, and the write payload (read into
//! memory when the request is valid, skipped without allocating when it is not, so the stream
//! stays in step and the connection keeps serving).

use std::io::{self, Read};

use thiserror::Error;

use super::validate::{Rejection, Session, validate};
use crate::backend::{Op, Request};
use crate::proto::consts::REQUEST_HEADER_LEN;
use crate::proto::{CmdFlags, Command, ProtoError, RequestHeader};

/// What the next request on the wire turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A valid request for the backend.
    Request {
        /// The request.
        request: Request,
        /// Payload bytes charged to the in-flight budget (read or write length).
        charge: u64,
    },
    /// An invalid request, to be answered with an error (its payload, if any, was skipped).
    Reject {
        /// The client's cookie.
        cookie: u64,
        /// The error to send.
        rejection: Rejection,
    },
    /// `NBD_CMD_DISC`: finish outstanding requests and close.
    Disconnect,
}

/// Why no further request can be read.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The client closed the connection between requests.
    #[error("connection closed by the client")]
    Closed,
    /// The connection failed or ended in the middle of a request.
    #[error("reading a request: {0}")]
    Io(#[from] io::Error),
    /// The header did not start with `NBD_REQUEST_MAGIC`: the stream cannot be resynchronised.
    #[error("malformed request: {0}")]
    Malformed(ProtoError),
}

/// What a request header asks for, decided before any payload is read.
#[derive(Debug)]
pub(crate) enum Header {
    /// `NBD_CMD_DISC`.
    Disconnect,
    /// A valid request: charge `charge` to the in-flight budget, then read `payload` bytes (a
    /// write's data) and build it with [`request_of`].
    Accept {
        /// The header.
        header: RequestHeader,
        /// Bytes charged to the in-flight budget (read or write length).
        charge: u64,
        /// Payload bytes that follow the header.
        payload: u32,
    },
    /// An invalid request: skip `payload` bytes and answer the rejection.
    Reject {
        /// The client's cookie.
        cookie: u64,
        /// The error to send.
        rejection: Rejection,
        /// Payload bytes that follow the header (skipped, never allocated).
        payload: u32,
    },
}

/// Decodes and validates one request header.
pub(crate) fn classify(buf: &[u8; REQUEST_HEADER_LEN], session: &Session) -> Result<Header, ProtoError> {
    let h = RequestHeader::decode(buf)?;
    if h.command == Command::Disc {
        return Ok(Header::Disconnect);
    }
    let payload = if h.command == Command::Write { h.length } else { 0 };
    Ok(match validate(&h, session) {
        Ok(()) => {
            let charge =
                if matches!(h.command, Command::Read | Command::Write) { u64::from(h.length) } else { 0 };
            Header::Accept { header: h, charge, payload }
        }
        Err(rejection) => Header::Reject { cookie: h.cookie, rejection, payload },
    })
}

/// The request of an accepted header, with its payload (`Some` exactly for writes).
pub(crate) fn request_of(h: &RequestHeader, payload: Option<Vec<u8>>) -> Request {
    let op = match (h.command, payload) {
        (Command::Read, _) => Op::Read,
        (Command::Write, data) => Op::Write(data.unwrap_or_default()),
        (Command::Flush, _) => Op::Flush,
        (Command::Trim, _) => Op::Trim,
        // `validate` admits no other command.
        _ => Op::WriteZeroes {
            no_hole: h.flags.contains(CmdFlags::NO_HOLE),
            fast: h.flags.contains(CmdFlags::FAST_ZERO),
        },
    };
    let fua = h.flags.contains(CmdFlags::FUA);
    Request { cookie: h.cookie, offset: h.offset, length: h.length, fua, op }
}

/// Reads one request. `admit(charge)` is called exactly once for every request that will be
/// answered (not for `NBD_CMD_DISC`), before its payload is allocated: the connection uses it to
/// wait for room in its in-flight budget.
pub fn read_request<R: Read>(
    r: &mut R,
    session: &Session,
    admit: &mut dyn FnMut(u64),
) -> Result<Incoming, ReadError> {
    let mut buf = [0u8; REQUEST_HEADER_LEN];
    match read_full(r, &mut buf)? {
        0 => return Err(ReadError::Closed),
        REQUEST_HEADER_LEN => {}
        _ => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
    }
    match classify(&buf, session).map_err(ReadError::Malformed)? {
        Header::Disconnect => Ok(Incoming::Disconnect),
        Header::Accept { header, charge, payload } => {
            admit(charge);
            let data = if header.command == Command::Write {
                let mut data = vec![0u8; payload as usize];
                r.read_exact(&mut data)?;
                Some(data)
            } else {
                None
            };
            Ok(Incoming::Request { request: request_of(&header, data), charge })
        }
        Header::Reject { cookie, rejection, payload } => {
            admit(0);
            skip(r, payload.into())?;
            Ok(Incoming::Reject { cookie, rejection })
        }
    }
}

/// Fills `buf` unless the stream ends first; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Reads and drops `len` bytes.
fn skip<R: Read>(r: &mut R, len: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.by_ref().take(len), &mut io::sink())?;
    if copied < len { Err(io::ErrorKind::UnexpectedEof.into()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Errno;

    fn session() -> Session {
        Session::for_tests(1 << 20, 1 << 16)
    }

    fn header(command: Command, flags: CmdFlags, cookie: u64, offset: u64, length: u32) -> Vec<u8> {
        RequestHeader { flags, command, cookie, offset, length }.encode().to_vec()
    }

    fn read_all(bytes: &[u8]) -> (Vec<Incoming>, Vec<u64>, ReadError) {
        let mut r = bytes;
        let (mut out, mut charges) = (Vec::new(), Vec::new());
        loop {
            match read_request(&mut r, &session(), &mut |c| charges.push(c)) {
                Ok(i) => out.push(i),
                Err(e) => return (out, charges, e),
            }
        }
    }

    #[test]
    fn a_pipelined_stream_decodes_in_order() {
        let mut wire = header(Command::Write, CmdFlags::FUA, 1, 4096, 3);
        wire.extend_from_slice(b"abc");
        wire.extend(header(Command::Read, CmdFlags::EMPTY, 2, 0, 512));
        wire.extend(header(Command::WriteZeroes, CmdFlags::NO_HOLE, 3, 0, 512));
        wire.extend(header(Command::Flush, CmdFlags::EMPTY, 4, 0, 0));
        wire.extend(header(Command::Disc, CmdFlags::EMPTY, 5, 0, 0));
        let (got, charges, end) = read_all(&wire);
        assert!(matches!(end, ReadError::Closed));
        assert_eq!(charges, [3, 512, 0, 0]);
        let ops: Vec<_> = got
            .iter()
            .map(|i| match i {
                Incoming::Request { request, .. } => {
                    format!("{}:{:?}:{}", request.cookie, request.op, request.fua)
                }
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            ops,
            [
                "1:Write(3 bytes):true",
                "2:Read:false",
                "3:WriteZeroes { no_hole: true, fast: false }:false",
                "4:Flush:false",
                "Disconnect"
            ]
        );
        let Incoming::Request { request, .. } = &got[0] else { panic!() };
        assert_eq!(request.op, Op::Write(b"abc".to_vec()));
    }

    #[test]
    fn invalid_writes_have_their_payload_skipped() {
        // Beyond the end (ENOSPC) and oversized (EINVAL): both payloads are skipped and the
        // following read still decodes.
        let mut wire = header(Command::Write, CmdFlags::EMPTY, 1, 1 << 20, 4);
        wire.extend_from_slice(&[9; 4]);
        wire.extend(header(Command::Write, CmdFlags::EMPTY, 2, 0, (1 << 16) + 1));
        wire.extend(vec![7; (1 << 16) + 1]);
        wire.extend(header(Command::Read, CmdFlags::EMPTY, 3, 0, 8));
        let (got, charges, _) = read_all(&wire);
        assert_eq!(charges, [0, 0, 8]);
        let errs: Vec<_> = got
            .iter()
            .filter_map(|i| match i {
                Incoming::Reject { cookie, rejection } => Some((*cookie, rejection.errno)),
                _ => None,
            })
            .collect();
        assert_eq!(errs, [(1, Errno::NoSpc), (2, Errno::Inval)]);
        assert!(matches!(&got[2], Incoming::Request { request, .. } if request.cookie == 3));
    }

    #[test]
    fn truncation_and_bad_magic_end_the_stream() {
        let mut wire = header(Command::Write, CmdFlags::EMPTY, 1, 0, 100);
        wire.extend_from_slice(&[1; 50]); // the client vanished mid-payload
        assert!(matches!(read_all(&wire).2, ReadError::Io(_)));
        let wire = header(Command::Read, CmdFlags::EMPTY, 1, 0, 100);
        assert!(matches!(read_all(&wire[..20]).2, ReadError::Io(_)));
        let mut wire = header(Command::Read, CmdFlags::EMPTY, 1, 0, 100);
        wire[3] ^= 1;
        assert!(matches!(read_all(&wire).2, ReadError::Malformed(ProtoError::BadMagic { .. })));
    }
}
