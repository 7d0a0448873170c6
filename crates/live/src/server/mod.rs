//! The server: configuration, listeners, connections and the running [`Server`] handle.

mod config;
mod connection;
mod handle;
mod listener;
mod polled;
mod stream;

pub use config::{ConfigError, ServerConfig};
pub use handle::{Bound, Server, ServerError, ServerStats};
pub use listener::ListenAddr;
pub use polled::Polled;
pub use stream::Stream;
