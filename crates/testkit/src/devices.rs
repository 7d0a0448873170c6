//! Small devices the suites share.

use firmware::config::DeviceConfig;

/// The small SSD the firmware's and the bridge's conformance, long-conformance and recovery
/// suites share (64 MiB raw: 2 ch x 2 ways x 2 planes x 32 blocks x 16 pages of 16 KiB, 25% OP,
/// 4 I/O queues), so GC, cache write-backs and translation-page traffic all happen within a few
/// thousand commands; `name` names it and `ftl` adds lines to its `[ftl]` table.
pub fn small_device(name: &str, ftl: &str) -> DeviceConfig {
    let text = format!(
        r#"
name = "{name}"
[geometry]
channels = 2
ways = 2
dies = 1
planes = 2
blocks = 32
pages = 16
page_size = "16KiB"
[controller]
dram = "64MiB"
[host]
queues = 4
queue_depth = 64
workers_per_queue = 4
[ftl]
op = 0.25
{ftl}
"#
    );
    DeviceConfig::from_toml(&text, &format!("{name} device")).unwrap_or_else(|e| panic!("{e}"))
}
