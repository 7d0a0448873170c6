//! The transmission phase, piece by piece: validating requests, reading them off the wire,
//! bounding what is in flight, and framing and sending replies.

mod frame;
mod gate;
mod outbox;
mod read;
mod validate;

pub use gate::Gate;
pub use read::{Incoming, ReadError, read_request};
pub use validate::{Rejection, Session, validate};

pub(crate) use frame::{Completion, Deliver, Route, frame};
pub(crate) use outbox::Outbox;
pub(crate) use read::{Header, classify, request_of};
