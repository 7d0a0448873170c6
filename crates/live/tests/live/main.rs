//! Integration tests of the NBD server, one binary: real clients (`nbdinfo`, `nbdcopy`,
//! `qemu-io`, `fio`) run as subprocesses against a server started in-process, and raw-socket
//! clients for bad input, pipelining, concurrency and shutdown. A missing client tool skips its
//! test with "<tool> not installed; skipping".

mod backends;
mod bad_input;
mod bench;
mod client;
mod concurrency;
mod interop;
mod support;
