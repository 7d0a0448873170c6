//! A raw NBD client built on the crate's own encoders, to send exactly the bytes a test wants
//! (including bad ones) and decode every reply; and fio's verifying run against a URI.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

use live::proto::consts::*;
use live::proto::{
    ChunkHeader, CmdFlags, Command, ErrorChunk, Info, InfoRequest, OptionHeader, OptionReplyHeader,
    ReplyType, RequestHeader, SimpleReplyHeader, TransmissionFlags,
};
use live::{ListenAddr, Stream};

/// One decoded reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub cookie: u64,
    /// 0 = success.
    pub error: u32,
    pub data: Vec<u8>,
    /// Message of a structured error chunk.
    pub message: String,
}

pub struct RawClient {
    pub stream: Stream,
    pub structured: bool,
    pub size: u64,
    pub flags: TransmissionFlags,
    /// Read lengths by cookie (simple replies carry no length).
    reads: HashMap<u64, u32>,
    next_cookie: u64,
}

pub fn connect(addr: &ListenAddr) -> Stream {
    match addr {
        ListenAddr::Tcp(a) => Stream::Tcp(TcpStream::connect(a).expect("tcp connect")),
        ListenAddr::Unix(p) => Stream::Unix(UnixStream::connect(p).expect("unix connect")),
    }
}

fn read_array<const N: usize>(s: &mut Stream) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    s.read_exact(&mut b)?;
    Ok(b)
}

fn option(s: &mut Stream, code: u32, data: &[u8]) {
    s.write_all(&OptionHeader { option: code, length: data.len() as u32 }.encode()).unwrap();
    s.write_all(data).unwrap();
}

fn option_reply(s: &mut Stream) -> (ReplyType, Vec<u8>) {
    let h = OptionReplyHeader::decode(&read_array(s).unwrap()).unwrap();
    let mut data = vec![0; h.length as usize];
    s.read_exact(&mut data).unwrap();
    (h.reply, data)
}

impl RawClient {
    /// Connects and negotiates `export` with `NBD_OPT_GO` (after `NBD_OPT_STRUCTURED_REPLY` if
    /// `structured`).
    pub fn open(addr: &ListenAddr, export: &str, structured: bool) -> RawClient {
        let mut s = connect(addr);
        let greeting: [u8; GREETING_LEN] = read_array(&mut s).unwrap();
        assert_eq!(&greeting[..16], b"NBDMAGICIHAVEOPT");
        s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
        if structured {
            option(&mut s, OPT_STRUCTURED_REPLY, &[]);
            assert_eq!(option_reply(&mut s).0, ReplyType::Ack);
        }
        let go = InfoRequest { name: export.into(), requests: vec![INFO_BLOCK_SIZE] };
        option(&mut s, OPT_GO, &go.encode());
        let (mut size, mut flags) = (None, TransmissionFlags::EMPTY);
        loop {
            match option_reply(&mut s) {
                (ReplyType::Info, data) => {
                    if let Ok(Info::Export { size: sz, flags: f }) = Info::decode(&data) {
                        (size, flags) = (Some(sz), f);
                    }
                }
                (ReplyType::Ack, _) => break,
                (other, data) => panic!("GO failed: {other:?} {}", String::from_utf8_lossy(&data)),
            }
        }
        let size = size.expect("NBD_INFO_EXPORT before ACK");
        RawClient { stream: s, structured, size, flags, reads: HashMap::new(), next_cookie: 1 }
    }

    /// Sends one request (and its payload) without waiting; returns its cookie.
    pub fn send(
        &mut self,
        command: Command,
        flags: CmdFlags,
        offset: u64,
        length: u32,
        payload: &[u8],
    ) -> u64 {
        let cookie = self.next_cookie;
        self.next_cookie += 1;
        if command == Command::Read {
            self.reads.insert(cookie, length);
        }
        let mut bytes = RequestHeader { flags, command, cookie, offset, length }.encode().to_vec();
        bytes.extend_from_slice(payload);
        self.stream.write_all(&bytes).unwrap();
        cookie
    }

    /// Receives the next complete reply.
    pub fn recv(&mut self) -> io::Result<Reply> {
        let magic: [u8; 4] = read_array(&mut self.stream)?;
        if u32::from_be_bytes(magic) == SIMPLE_REPLY_MAGIC {
            let rest: [u8; 12] = read_array(&mut self.stream)?;
            let mut whole = [0u8; 16];
            whole[..4].copy_from_slice(&magic);
            whole[4..].copy_from_slice(&rest);
            let h = SimpleReplyHeader::decode(&whole).unwrap();
            let len = self.reads.remove(&h.cookie).unwrap_or(0);
            let mut data = Vec::new();
            if h.error == 0 {
                data = vec![0; len as usize];
                self.stream.read_exact(&mut data)?;
            }
            return Ok(Reply { cookie: h.cookie, error: h.error, data, message: String::new() });
        }
        assert!(self.structured, "structured chunk without negotiation");
        let mut reply = Reply { cookie: 0, error: 0, data: Vec::new(), message: String::new() };
        let mut first = Some(magic);
        loop {
            let mut whole = [0u8; CHUNK_HEADER_LEN];
            match first.take() {
                Some(m) => {
                    whole[..4].copy_from_slice(&m);
                    self.stream.read_exact(&mut whole[4..])?;
                }
                None => self.stream.read_exact(&mut whole)?,
            }
            let h = ChunkHeader::decode(&whole).expect("chunk magic");
            let mut payload = vec![0; h.length as usize];
            self.stream.read_exact(&mut payload)?;
            reply.cookie = h.cookie;
            match h.kind {
                REPLY_TYPE_OFFSET_DATA => reply.data.extend_from_slice(&payload[8..]),
                REPLY_TYPE_NONE => assert!(payload.is_empty()),
                k if k & REPLY_TYPE_FLAG_ERROR != 0 => {
                    let e = ErrorChunk::decode(k, &payload).unwrap();
                    (reply.error, reply.message) = (e.error, e.message);
                }
                k => panic!("unexpected chunk type {k}"),
            }
            if h.is_done() {
                self.reads.remove(&reply.cookie);
                return Ok(reply);
            }
        }
    }

    /// Sends one request and waits for its reply.
    pub fn call(
        &mut self,
        command: Command,
        flags: CmdFlags,
        offset: u64,
        length: u32,
        payload: &[u8],
    ) -> Reply {
        let cookie = self.send(command, flags, offset, length, payload);
        let reply = self.recv().expect("reply");
        assert_eq!(reply.cookie, cookie);
        reply
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) -> Reply {
        self.call(Command::Write, CmdFlags::EMPTY, offset, data.len() as u32, data)
    }

    pub fn read(&mut self, offset: u64, len: u32) -> Reply {
        self.call(Command::Read, CmdFlags::EMPTY, offset, len, &[])
    }

    /// Sends `NBD_CMD_DISC` and checks that the server closes the connection.
    pub fn disconnect(mut self) {
        self.send(Command::Disc, CmdFlags::EMPTY, 0, 0, &[]);
        let mut rest = Vec::new();
        self.stream.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "no reply to NBD_CMD_DISC");
    }
}

/// Reads until EOF or error: true when the server closed the connection.
pub fn closed_by_server(s: &mut Stream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return true,
            Ok(_) => continue,
        }
    }
}

/// fio's nbd engine against `uri`: random 4 KiB reads and writes at QD32 over `size` (fio's
/// syntax) with crc32c verification of every block; panics with fio's output unless it passes.
pub fn fio_verify(uri: &str, size: &str) {
    let dir = tempfile::tempdir().unwrap(); // fio may leave state files in its directory
    let out = std::process::Command::new("fio")
        .current_dir(dir.path())
        .args([
            "--name=randrw",
            "--ioengine=nbd",
            &format!("--uri={uri}"),
            "--rw=randrw",
            "--bs=4k",
            "--iodepth=32",
            &format!("--size={size}"),
            "--verify=crc32c",
            "--verify_fatal=1",
            "--do_verify=1",
            "--randseed=42",
            "--verify_state_save=0",
        ])
        .output()
        .expect("fio runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("err= 0"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
