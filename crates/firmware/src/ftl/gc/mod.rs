//! Garbage collection and static wear levelling.

mod collect;
pub mod victim;
