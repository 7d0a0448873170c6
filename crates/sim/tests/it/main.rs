//! Integration tests of the runtime: ordering, cores, determinism, deadlock reports.

mod cores;
mod determinism;
mod ordering;
