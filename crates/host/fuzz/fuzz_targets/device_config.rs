//! Fuzzes the device configuration parser (`DeviceConfig::from_toml`, what `ssdlab run
//! my.toml` and every preset go through) with arbitrary text: anything it accepts must resolve,
//! print as TOML and parse back to the same configuration, and `--set PATH=VALUE` on it (path and
//! value taken from the input's last line) must return a configuration or an error. Any panic is
//! a bug: bad input must come back as an error naming the field.

#![no_main]

use firmware::config::DeviceConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(cfg) = DeviceConfig::from_toml(&text, "fuzz.toml") else { return };
    let resolved = cfg.resolved();
    let printed = cfg.to_toml();
    let again = DeviceConfig::from_toml(&printed, "printed").expect("a printed configuration parses");
    assert_eq!(again.to_toml(), printed, "printing is stable");
    let _ = resolved.to_toml();
    let set = text.lines().last().and_then(|l| l.strip_prefix("#set ")).and_then(|l| l.split_once('='));
    if let Some(Ok(changed)) = set.map(|(path, value)| cfg.set(path.trim(), value.trim())) {
        let _ = changed.to_toml();
    }
});
