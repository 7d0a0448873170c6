//! Serves a [`MemoryBackend`] export over NBD, for interop runs and benchmarks by hand:
//!
//! ```text
//! cargo run --release -p ssdlab-live --example memory_server -- --size 1073741824 --tcp 127.0.0.1:10809
//! fio --ioengine=nbd --uri=nbd://127.0.0.1:10809 --rw=randread --bs=4k --iodepth=32 --name=r ...
//! ```
//!
//! Options: `--size BYTES` (default 1 GiB), `--name NAME` (default `mem`), `--tcp ADDR` and
//! `--unix PATH` (repeatable; default `127.0.0.1:10809`), `--max-request BYTES`. Prints one
//! URI per listener, then serves until its standard input is closed.

use std::io::Read;
use std::sync::Arc;

use live::{MemoryBackend, Server, ServerConfig};

fn main() {
    if let Err(e) = run() {
        eprintln!("memory_server: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let (mut size, mut name) = (1u64 << 30, "mem".to_string());
    let mut config = ServerConfig { tcp: Vec::new(), ..ServerConfig::default() };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--size" => size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--name" => name = value()?,
            "--tcp" => config.tcp.push(value()?.parse().map_err(|e| format!("--tcp: {e}"))?),
            "--unix" => config.unix.push(value()?.into()),
            "--max-request" => {
                config.max_request_bytes = value()?.parse().map_err(|e| format!("--max-request: {e}"))?
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if config.tcp.is_empty() && config.unix.is_empty() {
        config.tcp = ServerConfig::default().tcp;
    }
    let server =
        Server::start(Arc::new(MemoryBackend::new(name, size)), config).map_err(|e| e.to_string())?;
    for addr in server.addrs() {
        println!("{}", addr.uri());
    }
    // Serve until the parent closes our standard input.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let _ = server.shutdown();
    Ok(())
}
