//! Server configuration: plain data with documented defaults, and a validation step that names
//! the offending field.

use std::net::SocketAddr;
use std::path::PathBuf;

use thiserror::Error;

/// How the server listens and how much it accepts per connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// TCP addresses to listen on (port 0 picks a free port; see `Server::addrs`).
    /// Default: `127.0.0.1:10809` (the IANA NBD port).
    pub tcp: Vec<SocketAddr>,
    /// Unix socket paths to listen on. A stale socket file left by a dead server is replaced;
    /// the file is removed on shutdown. Default: none.
    pub unix: Vec<PathBuf>,
    /// Allow TCP addresses that are not loopback addresses. The server has no authentication
    /// or TLS, so it refuses to be reachable from other hosts unless told so. Default: false.
    pub allow_non_loopback: bool,
    /// Largest read or write payload, in bytes; a power of two from 64 KiB to 1 GiB. Advertised
    /// as the maximum block size (capping the export's own); longer reads and writes get
    /// `EINVAL` (a write's payload is skipped) and the connection keeps serving. Default: 32 MiB.
    pub max_request_bytes: u32,
    /// Requests one connection may have in flight (read but not yet answered) before the server
    /// stops reading from it. Default: 256.
    pub max_in_flight_requests: usize,
    /// Read and write payload bytes one connection may have in flight; at least
    /// `max_request_bytes`. Default: 128 MiB.
    pub max_in_flight_bytes: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            tcp: vec![SocketAddr::from(([127, 0, 0, 1], 10809))],
            unix: Vec::new(),
            allow_non_loopback: false,
            max_request_bytes: 32 << 20,
            max_in_flight_requests: 256,
            max_in_flight_bytes: 128 << 20,
        }
    }
}

/// A configuration the server refuses, naming the field.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// Neither `tcp` nor `unix` lists an address.
    #[error("no listener: `tcp` and `unix` are both empty")]
    NoListener,
    /// `tcp` lists an address that is not loopback.
    #[error("`tcp` address {0} is not a loopback address (set `allow_non_loopback` to serve it)")]
    NonLoopback(SocketAddr),
    /// `max_request_bytes` is out of range.
    #[error("`max_request_bytes` = {0}: must be a power of two from 65536 to 1073741824")]
    MaxRequest(u32),
    /// `max_in_flight_requests` is zero.
    #[error("`max_in_flight_requests` must be at least 1")]
    InFlightRequests,
    /// `max_in_flight_bytes` is below `max_request_bytes`.
    #[error("`max_in_flight_bytes` = {0}: must be at least `max_request_bytes`")]
    InFlightBytes(u64),
}

impl ServerConfig {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.tcp.is_empty() && self.unix.is_empty() {
            return Err(ConfigError::NoListener);
        }
        if let Some(addr) = self.tcp.iter().find(|a| !a.ip().is_loopback())
            && !self.allow_non_loopback
        {
            return Err(ConfigError::NonLoopback(*addr));
        }
        let m = self.max_request_bytes;
        if !m.is_power_of_two() || !(1 << 16..=1 << 30).contains(&m) {
            return Err(ConfigError::MaxRequest(m));
        }
        if self.max_in_flight_requests == 0 {
            return Err(ConfigError::InFlightRequests);
        }
        if self.max_in_flight_bytes < u64::from(m) {
            return Err(ConfigError::InFlightBytes(self.max_in_flight_bytes));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_loopback_only() {
        let c = ServerConfig::default();
        assert_eq!(c.validate(), Ok(()));
        let public = SocketAddr::from(([0, 0, 0, 0], 10809));
        let c = ServerConfig { tcp: vec![public], ..ServerConfig::default() };
        assert_eq!(c.validate(), Err(ConfigError::NonLoopback(public)));
        let c = ServerConfig { allow_non_loopback: true, ..c };
        assert_eq!(c.validate(), Ok(()));
        let v6 = ServerConfig { tcp: vec!["[::1]:0".parse().unwrap()], ..ServerConfig::default() };
        assert_eq!(v6.validate(), Ok(()));
    }

    #[test]
    fn bad_fields_are_named() {
        let base = ServerConfig::default();
        let c = ServerConfig { tcp: vec![], ..base.clone() };
        assert_eq!(c.validate(), Err(ConfigError::NoListener));
        for bad in [0, 1000, 1 << 15, (1 << 20) + 1, 1 << 31] {
            let c = ServerConfig { max_request_bytes: bad, ..base.clone() };
            assert_eq!(c.validate(), Err(ConfigError::MaxRequest(bad)));
        }
        let c = ServerConfig { max_in_flight_requests: 0, ..base.clone() };
        assert_eq!(c.validate(), Err(ConfigError::InFlightRequests));
        let c = ServerConfig { max_in_flight_bytes: 1 << 20, ..base };
        assert!(c.validate().unwrap_err().to_string().contains("max_in_flight_bytes"));
    }
}
