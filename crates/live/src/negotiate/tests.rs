//! The handshake driven by byte scripts: what a client sends is prepared up front, the server
//! runs to completion against it, and its output is decoded and checked message by message.

use std::io::{self, Read, Write};
use std::sync::atomic::AtomicBool;

use super::*;
use crate::backend::{Replier, Request};
use crate::export::BlockSize;
use crate::memory::MemoryBackend;
use crate::proto::consts::*;
use crate::proto::{OptionReplyHeader, TransmissionFlags, decode_export_name_reply};

/// A byte stream that plays a prepared client script and records what the server sends.
struct Script {
    input: io::Cursor<Vec<u8>>,
    output: Vec<u8>,
    /// Writes fail once the output holds this many bytes (a client that went away).
    write_limit: usize,
}

impl Read for Script {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Script {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.output.len() + buf.len() > self.write_limit {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Client script builder.
struct Client(Vec<u8>);

impl Client {
    fn new(flags: u32) -> Client {
        Client(flags.to_be_bytes().to_vec())
    }
    fn option(mut self, code: u32, data: &[u8]) -> Client {
        self.0.extend(OptionHeader { option: code, length: data.len() as u32 }.encode());
        self.0.extend_from_slice(data);
        self
    }
    fn info(self, code: u32, name: &str, requests: &[u16]) -> Client {
        self.option(code, &InfoRequest { name: name.into(), requests: requests.to_vec() }.encode())
    }
}

const FIXED: u32 = FLAG_C_FIXED_NEWSTYLE;
const BOTH: u32 = FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES;

fn backend() -> MemoryBackend {
    let mut disk = MemoryBackend::full_featured("disk", 1 << 20);
    disk.block_size = BlockSize::new(512, 4096, 1 << 20).unwrap();
    let mut ro = ExportInfo::new("ro", 8192);
    ro.read_only = true;
    MemoryBackend::with_exports(vec![disk, ro])
}

type Run<C> = (Result<Outcome<C>, HandshakeError>, Vec<u8>);

fn run_with<B: Backend>(b: &B, script: Client, shutting_down: bool, write_limit: usize) -> Run<B::Conn> {
    let mut io = Script { input: io::Cursor::new(script.0), output: Vec::new(), write_limit };
    let flag = AtomicBool::new(shutting_down);
    let result = negotiate(&mut io, b, 1 << 25, &flag);
    (result, io.output)
}

fn run<B: Backend>(b: &B, script: Client) -> Run<B::Conn> {
    run_with(b, script, false, usize::MAX)
}

/// Splits server output into the greeting, option replies and whatever follows them.
fn parse(out: &[u8]) -> (u16, Vec<(u32, ReplyType, Vec<u8>)>, &[u8]) {
    assert_eq!(&out[..16], b"NBDMAGICIHAVEOPT", "greeting magic");
    let flags = u16::from_be_bytes([out[16], out[17]]);
    let mut rest = &out[18..];
    let mut replies = Vec::new();
    while rest.len() >= 20 {
        let Ok(h) = OptionReplyHeader::decode(rest[..20].try_into().unwrap()) else { break };
        let end = 20 + h.length as usize;
        replies.push((h.option, h.reply, rest[20..end].to_vec()));
        rest = &rest[end..];
    }
    (flags, replies, rest)
}

fn kinds(replies: &[(u32, ReplyType, Vec<u8>)]) -> Vec<ReplyType> {
    replies.iter().map(|r| r.1).collect()
}

#[test]
fn greeting_advertises_fixed_newstyle_and_no_zeroes() {
    let (result, out) = run(&backend(), Client::new(FIXED));
    assert!(matches!(result, Err(HandshakeError::Io(_))), "client hung up after its flags");
    assert_eq!(out, b"NBDMAGICIHAVEOPT\x00\x03");
}

#[test]
fn export_name_enters_transmission_with_or_without_zeroes() {
    for (flags, pad) in [(FIXED, 124), (BOTH, 0), (0, 124)] {
        let b = backend();
        let (result, out) = run(&b, Client::new(flags).option(OPT_EXPORT_NAME, b"disk"));
        let Ok(Outcome::Transmission(n)) = result else { panic!("{result:?}") };
        let (_, replies, rest) = parse(&out);
        assert!(replies.is_empty());
        assert_eq!(rest.len(), 10 + pad, "client flags {flags:#x}");
        assert!(rest[10..].iter().all(|&z| z == 0));
        let (size, tflags) = decode_export_name_reply(rest[..10].try_into().unwrap());
        assert_eq!((size, tflags), (1 << 20, n.session.flags));
        assert!(tflags.contains(TransmissionFlags::SEND_FLUSH | TransmissionFlags::SEND_TRIM));
        assert!(!n.session.structured);
        assert_eq!(b.connections(), 1);
    }
}

#[test]
fn export_name_for_an_unknown_export_hangs_up_without_a_reply() {
    let b = backend();
    let (result, out) = run(&b, Client::new(FIXED).option(OPT_EXPORT_NAME, b"nope"));
    assert!(matches!(result, Err(HandshakeError::ExportName(_))));
    assert_eq!(out.len(), GREETING_LEN);
    assert_eq!(b.connections(), 0);
    let (result, _) = run(&b, Client::new(FIXED).option(OPT_EXPORT_NAME, &[b'x'; 5000]));
    assert!(matches!(result, Err(HandshakeError::ExportName(_))));
}

#[test]
fn go_reports_export_and_block_size_then_enters_transmission() {
    let b = backend();
    let script = Client::new(BOTH).info(OPT_GO, "disk", &[INFO_BLOCK_SIZE, INFO_NAME, INFO_DESCRIPTION]);
    let (result, out) = run(&b, script);
    let Ok(Outcome::Transmission(n)) = result else { panic!("{result:?}") };
    let (_, replies, rest) = parse(&out);
    assert!(rest.is_empty(), "no padding after GO");
    assert!(replies.iter().all(|r| r.0 == OPT_GO));
    assert_eq!(
        kinds(&replies),
        [ReplyType::Info; 4].iter().copied().chain([ReplyType::Ack]).collect::<Vec<_>>()
    );
    let infos: Vec<Info> = replies[..4].iter().map(|r| Info::decode(&r.2).unwrap()).collect();
    assert_eq!(infos[0], Info::Export { size: 1 << 20, flags: n.session.flags });
    assert_eq!(infos[1], Info::BlockSize { min: 512, preferred: 4096, max: 1 << 20 });
    assert_eq!(infos[2], Info::Name("disk".into()));
    assert_eq!(infos[3], Info::Description("ssdlab in-memory export".into()));
    assert_eq!(n.export.name, "disk");
    assert_eq!(b.connections(), 1);
}

#[test]
fn the_empty_name_selects_the_default_export() {
    let (result, out) = run(&backend(), Client::new(BOTH).info(OPT_GO, "", &[INFO_NAME]));
    let Ok(Outcome::Transmission(n)) = result else { panic!("{result:?}") };
    assert_eq!(n.export.name, "disk");
    let (_, replies, _) = parse(&out);
    assert!(
        replies.iter().any(|r| r.1 == ReplyType::Info && Info::decode(&r.2) == Ok(Info::Name("disk".into())))
    );
}

#[test]
fn structured_replies_are_acked_once_and_add_df() {
    let script = Client::new(BOTH)
        .option(OPT_STRUCTURED_REPLY, &[])
        .option(OPT_STRUCTURED_REPLY, &[])
        .option(OPT_STRUCTURED_REPLY, b"x")
        .info(OPT_GO, "disk", &[]);
    let (result, out) = run(&backend(), script);
    let Ok(Outcome::Transmission(n)) = result else { panic!("{result:?}") };
    let (_, replies, _) = parse(&out);
    assert_eq!(kinds(&replies[..3]), [ReplyType::Ack, ReplyType::ErrInvalid, ReplyType::ErrInvalid]);
    assert!(n.session.structured);
    assert!(n.session.flags.contains(TransmissionFlags::SEND_DF));
}

#[test]
fn info_answers_without_entering_transmission() {
    let b = backend();
    let (result, out) = run(&b, Client::new(BOTH).info(OPT_INFO, "ro", &[]));
    assert!(matches!(result, Err(HandshakeError::Io(_))), "still negotiating when the script ends");
    let (_, replies, _) = parse(&out);
    assert_eq!(kinds(&replies), [ReplyType::Info, ReplyType::Info, ReplyType::Ack]);
    let Info::Export { size, flags } = Info::decode(&replies[0].2).unwrap() else { panic!() };
    assert_eq!(size, 8192);
    assert!(flags.contains(TransmissionFlags::READ_ONLY));
    assert_eq!(b.connections(), 0, "INFO does not connect");

    let script = Client::new(BOTH).info(OPT_INFO, "ro", &[]).info(OPT_GO, "ro", &[]);
    let (result, _) = run(&b, script);
    assert!(matches!(result, Ok(Outcome::Transmission(_))));
    assert_eq!(b.connections(), 1);
}

#[test]
fn list_names_every_export_and_rejects_data() {
    let script = Client::new(BOTH).option(OPT_LIST, &[]).option(OPT_LIST, b"junk").option(OPT_ABORT, &[]);
    let (result, out) = run(&backend(), script);
    assert!(matches!(result, Ok(Outcome::Aborted)));
    let (_, replies, _) = parse(&out);
    let expect =
        [ReplyType::Server, ReplyType::Server, ReplyType::Ack, ReplyType::ErrInvalid, ReplyType::Ack];
    assert_eq!(kinds(&replies), expect);
    let names: Vec<String> = replies[..2].iter().map(|r| ServerEntry::decode(&r.2).unwrap().name).collect();
    assert_eq!(names, ["disk", "ro"]);
    assert_eq!(replies[4].0, OPT_ABORT);
}

#[test]
fn abort_is_acknowledged_even_with_data() {
    let (result, out) = run(&backend(), Client::new(FIXED).option(OPT_ABORT, b"ignored"));
    assert!(matches!(result, Ok(Outcome::Aborted)));
    assert_eq!(kinds(&parse(&out).1), [ReplyType::Ack]);
    // A client that aborts and closes without reading the reply is fine too.
    let (result, _) = run_with(&backend(), Client::new(FIXED).option(OPT_ABORT, &[]), false, GREETING_LEN);
    assert!(matches!(result, Ok(Outcome::Aborted)));
}

#[test]
fn unsupported_options_are_skipped_with_unsup() {
    let script = Client::new(BOTH)
        .option(OPT_STARTTLS, &[])
        .option(OPT_LIST_META_CONTEXT, &[0; 12])
        .option(OPT_SET_META_CONTEXT, &[1; 40])
        .option(OPT_PEEK_EXPORT, &[])
        .option(0xdead_beef, &[7; 1000])
        .info(OPT_GO, "disk", &[]);
    let (result, out) = run(&backend(), script);
    assert!(matches!(result, Ok(Outcome::Transmission(_))), "the stream stays in step");
    let (_, replies, _) = parse(&out);
    assert_eq!(kinds(&replies[..5]), [ReplyType::ErrUnsup; 5]);
    let options: Vec<u32> = replies[..5].iter().map(|r| r.0).collect();
    assert_eq!(
        options,
        [OPT_STARTTLS, OPT_LIST_META_CONTEXT, OPT_SET_META_CONTEXT, OPT_PEEK_EXPORT, 0xdead_beef]
    );
}

#[test]
fn unknown_and_malformed_go_get_error_replies_and_negotiation_continues() {
    let mut bad_len = InfoRequest { name: "disk".into(), requests: vec![] }.encode();
    bad_len[3] = 200; // name length beyond the data
    let mut odd_count = InfoRequest { name: "disk".into(), requests: vec![3] }.encode();
    odd_count.push(0);
    let script = Client::new(BOTH)
        .info(OPT_GO, "nope", &[])
        .option(OPT_GO, &bad_len)
        .option(OPT_INFO, &odd_count)
        .option(OPT_GO, &[0, 0])
        .info(OPT_GO, "disk", &[]);
    let (result, out) = run(&backend(), script);
    assert!(matches!(result, Ok(Outcome::Transmission(_))));
    let (_, replies, _) = parse(&out);
    let expect = [ReplyType::ErrUnknown, ReplyType::ErrInvalid, ReplyType::ErrInvalid, ReplyType::ErrInvalid];
    assert_eq!(kinds(&replies[..4]), expect);
    assert_eq!(String::from_utf8_lossy(&replies[0].2), "unknown export \"nope\"");
}

#[test]
fn oversized_options() {
    // Past the hard limit: hang up without reading the data.
    let mut script = Client::new(BOTH);
    script.0.extend(OptionHeader { option: OPT_GO, length: u32::MAX }.encode());
    let (result, out) = run(&backend(), script);
    assert!(matches!(result, Err(HandshakeError::OptionTooLarge { option: OPT_GO, length: u32::MAX })));
    assert_eq!(out.len(), GREETING_LEN);
    // Too big for a supported option but under the limit: skipped, TOO_BIG, still negotiating.
    let script = Client::new(BOTH).option(OPT_GO, &vec![0; 70_000]).option(OPT_ABORT, &[]);
    let (result, out) = run(&backend(), script);
    assert!(matches!(result, Ok(Outcome::Aborted)));
    assert_eq!(kinds(&parse(&out).1), [ReplyType::ErrTooBig, ReplyType::Ack]);
}

#[test]
fn protocol_violations_hang_up() {
    let (result, out) = run(&backend(), Client::new(0x4));
    assert!(matches!(result, Err(HandshakeError::ClientFlags(4))));
    assert_eq!(out.len(), GREETING_LEN);
    let mut script = Client::new(BOTH).option(OPT_LIST, &[]);
    script.0[4] = b'X'; // the option's IHAVEOPT magic
    let (result, _) = run(&backend(), script);
    assert!(matches!(result, Err(HandshakeError::Malformed(ProtoError::BadMagic { .. }))));
    let mut script = Client::new(BOTH);
    script.0.extend(&OptionHeader { option: OPT_LIST, length: 0 }.encode()[..9]);
    assert!(matches!(run(&backend(), script).0, Err(HandshakeError::Io(_))));
}

#[test]
fn while_shutting_down_options_get_err_shutdown_but_abort_works() {
    let b = backend();
    let script = Client::new(BOTH).info(OPT_GO, "disk", &[]).option(OPT_LIST, &[]).option(OPT_ABORT, &[]);
    let (result, out) = run_with(&b, script, true, usize::MAX);
    assert!(matches!(result, Ok(Outcome::Aborted)));
    let expect = [ReplyType::ErrShutdown, ReplyType::ErrShutdown, ReplyType::Ack];
    assert_eq!(kinds(&parse(&out).1), expect);
    assert_eq!(b.connections(), 0);
    let (result, _) = run_with(&b, Client::new(BOTH).option(OPT_EXPORT_NAME, b"disk"), true, usize::MAX);
    assert!(matches!(result, Err(HandshakeError::ExportName(_))));
}

/// A backend whose exports exist but never accept connections.
struct Full(MemoryBackend);

impl Backend for Full {
    type Conn = ();
    fn export(&self, name: &str) -> Option<ExportInfo> {
        self.0.export(name)
    }
    fn list(&self) -> Vec<String> {
        self.0.list()
    }
    fn connect(&self, _: &ExportInfo) -> Result<(), BackendError> {
        Err(BackendError::Unavailable("no free queue pair".into()))
    }
    fn submit(&self, _: &(), _: Request, reply: Replier) {
        reply.error(crate::proto::Errno::Io);
    }
    fn disconnect(&self, _: ()) {}
}

#[test]
fn a_refused_connection_is_reported_through_go() {
    let script = Client::new(BOTH).info(OPT_GO, "disk", &[]).info(OPT_INFO, "disk", &[]);
    let (result, out) = run(&Full(backend()), script);
    assert!(matches!(result, Err(HandshakeError::Io(_))));
    let (_, replies, _) = parse(&out);
    assert_eq!(kinds(&replies), [ReplyType::ErrPolicy, ReplyType::Info, ReplyType::Info, ReplyType::Ack]);
    assert_eq!(String::from_utf8_lossy(&replies[0].2), "export unavailable: no free queue pair");
}

#[test]
fn a_client_gone_before_the_go_reply_is_disconnected_from_the_backend() {
    let b = backend();
    let (result, _) = run_with(&b, Client::new(BOTH).info(OPT_GO, "disk", &[]), false, GREETING_LEN + 10);
    assert!(matches!(result, Err(HandshakeError::Io(_))));
    assert_eq!(b.connections(), 0);
}
