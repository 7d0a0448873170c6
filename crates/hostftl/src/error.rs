//! What a host asking the FTL for something it cannot do is told.

use firmware::ftl::BlockUse;

/// A host-directed write names a place the array does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// No such logical channel group.
    #[error("placement group:{group}: the array has {groups} channel groups (0 to {})", groups - 1)]
    NoGroup {
        /// The group asked for.
        group: u32,
        /// Groups the array has.
        groups: u32,
    },
    /// No such die.
    #[error("placement die:{die}: the array has {dies} dies (0 to {})", dies - 1)]
    NoDie {
        /// The die asked for.
        die: u32,
        /// Dies the array has.
        dies: u32,
    },
}

/// A host GC request the FTL refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GcRequestError {
    /// No such block.
    #[error("GC request for block {block}: the array has {blocks} blocks")]
    NoBlock {
        /// The block asked for.
        block: u32,
        /// Blocks the array has.
        blocks: u32,
    },
    /// The block cannot be collected now: it is free, a write frontier, already being
    /// collected, has programs pending, or is bad.
    #[error("GC request for block {block}: the block is in use ({why})")]
    InUse {
        /// The block asked for.
        block: u32,
        /// Its state.
        why: String,
    },
}

/// Why a block in state `usage` with `pending` programs cannot be collected, if it cannot.
pub(crate) fn not_collectable(usage: BlockUse, pending: u32) -> Option<String> {
    match usage {
        BlockUse::Closed if pending == 0 => None,
        BlockUse::Closed => Some(format!("{pending} programs pending")),
        BlockUse::Open => Some("an open write frontier".into()),
        BlockUse::Free => Some("free, nothing to collect".into()),
        BlockUse::Victim => Some("already being collected".into()),
        BlockUse::Bad => Some("bad".into()),
    }
}
