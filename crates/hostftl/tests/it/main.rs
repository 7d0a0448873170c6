//! Integration tests of the host-side FTL.

mod conformance;
mod control;
mod crash;

use firmware::config::DeviceConfig;

/// A small array under a host-side FTL: 4 channels in 2 groups, 2 dies each, controllers of 2
/// channels, 32 blocks of 16 pages per die; `extra` is appended to the `[ftl]` section.
pub fn small(extra: &str) -> DeviceConfig {
    small_array(r#"{ channels_per_controller = 2, sram = "1MiB" }"#, extra)
}

/// [`small`] with the array section `array` (an inline table).
pub fn small_array(array: &str, extra: &str) -> DeviceConfig {
    let text = format!(
        r#"
name = "small-hostftl"
[system]
kind = "host-ftl"
groups = 2
array = {array}
host = {{ cores = 2 }}
[geometry]
channels = 4
ways = 1
dies = 2
planes = 1
blocks = 32
pages = 16
page_size = "16KiB"
oob_size = "0B"
[controller]
cores = [{{ name = "array fil", clock = "250MHz" }}]
dram = "8MiB"
[architecture]
kind = "softssd"
hil_core = 0
fil_core = 0
ecc_core = 0
[host]
queues = 4
[ftl]
op = 0.25
mapping = {{ kind = "full" }}
cache = {{ capacity = "256KiB" }}
{extra}
"#
    );
    DeviceConfig::from_toml(&text, "small host-ftl").unwrap_or_else(|e| panic!("{e}"))
}
