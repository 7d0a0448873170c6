//! Fuzzes the server side of the handshake with arbitrary client bytes, and whatever follows a
//! successful GO / EXPORT_NAME with the request reader. Any panic is a bug: a bad client must
//! get an error reply or a hang-up. Also checks that the server's output is well formed: the
//! greeting, then option replies that decode, each naming an option the client sent.

#![no_main]

use std::io::{self, Read, Write};
use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use live::negotiate::{Outcome, negotiate};
use live::proto::consts::{GREETING_LEN, OPTION_REPLY_HEADER_LEN};
use live::proto::{Greeting, OptionReplyHeader};
use live::transmission::{Incoming, read_request};
use live::{BlockSize, ExportInfo, MemoryBackend};

struct Duplex<'a> {
    input: &'a [u8],
    output: Vec<u8>,
}

impl Read for Duplex<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Duplex<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn backend() -> MemoryBackend {
    let mut disk = MemoryBackend::full_featured("disk", 1 << 20);
    disk.block_size = BlockSize::new(512, 4096, 1 << 20).unwrap();
    let mut ro = ExportInfo::new("ro", 4096);
    ro.read_only = true;
    MemoryBackend::with_exports(vec![disk, ro])
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, script)) = data.split_first() else { return };
    let b = backend();
    let shutting_down = AtomicBool::new(mode & 1 == 1);
    let mut io = Duplex { input: script, output: Vec::new() };
    let outcome = negotiate(&mut io, &b, 1 << 16, &shutting_down);

    let out = &io.output;
    assert!(Greeting::decode(out[..GREETING_LEN].try_into().unwrap()).is_ok());
    let mut rest = &out[GREETING_LEN..];
    while rest.len() >= OPTION_REPLY_HEADER_LEN {
        let Ok(h) = OptionReplyHeader::decode(rest[..OPTION_REPLY_HEADER_LEN].try_into().unwrap()) else {
            break; // the EXPORT_NAME answer, which has no header
        };
        let end = OPTION_REPLY_HEADER_LEN + h.length as usize;
        assert!(end <= rest.len(), "reply length within the output");
        rest = &rest[end..];
    }

    if let Ok(Outcome::Transmission(n)) = outcome {
        let mut input = io.input;
        let mut requests = 0;
        while let Ok(incoming) = read_request(&mut input, &n.session, &mut |_| {}) {
            if let Incoming::Request { request, .. } = incoming {
                let end = request.offset + u64::from(request.length);
                assert!(end <= n.session.size);
            }
            requests += 1;
            if requests > 10_000 {
                break;
            }
        }
        live::Backend::disconnect(&b, n.conn);
    }
    assert_eq!(b.connections(), 0);
});
