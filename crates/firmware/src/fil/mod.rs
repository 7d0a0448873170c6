//! The flash interface layer (FIL): per-die transaction queues by source, a scheduling policy,
//! and a model of the dies and channels it drives. It runs on its own controller core, as in
//! SoftSSD; firmware reaches it through [`Fil`].

mod completion;
mod config;
mod engine;
mod handle;
mod hw;
mod policy;
mod queues;
mod stats;
mod txn;

pub use completion::TxnReceiver;
pub use config::{FilConfig, PolicyConfig};
pub use handle::{Fil, SharedArray};
pub use policy::{FifoPolicy, PriorityPolicy, QueueView, SchedPolicy};
pub use stats::{FilStats, FlowFlash, OpStats};
pub use txn::{
    FlashOp, FlashRequest, FlashStatus, FlowTag, PageWrite, QueueKind, TxnOutcome, TxnResult, TxnSource,
    TxnTiming,
};
