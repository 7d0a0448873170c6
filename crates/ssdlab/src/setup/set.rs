//! `--set PATH=VALUE`: see [`firmware::config::set`], where the configuration's own dotted paths
//! are resolved (the firmware's tests use the same changes).

pub use firmware::config::set::{SetError, Setting, apply_settings, parse_value, value_text};
