//! # ssdlab-live: serving a simulated SSD as a real block device
//!
//! The NBD protocol and server. This is the only ssdlab crate that touches the network.
