//! Bad input gives one-line errors naming the field or line; nothing panics.

use crate::fails;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const GOOD: &str =
    "name = 'x'\n[geometry]\nchannels = 2\nways = 1\nblocks = 8\npages = 16\npage_size = '16KiB'\n";

#[test]
fn unknown_device_lists_the_presets() {
    let e = fails(&["phys", "no-such-device"]);
    assert!(e.contains("no preset or file named `no-such-device` (presets: softssd"), "{e}");
}

#[test]
fn impossible_geometries_and_timings_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (GOOD.replace("channels = 2", "channels = 0"), "geometry.channels: must be at least 1 (got 0)"),
        (GOOD.replace("'16KiB'", "'10000B'"), "geometry.page_size: must be a multiple of mapping_unit"),
        (
            format!("{GOOD}[timing]\nt_prog = ['1us', '2us', '3us']\n"),
            "timing.t_prog: mlc cells have 2 page types",
        ),
        (
            format!("{GOOD}[timing]\nbus_width = 7\n"),
            "timing.bus_width: must be 8, 16, 32 or 64 bits (got 7)",
        ),
        (format!("{GOOD}[timing]\nt_erase = '0'\n"), "timing.t_erase: must be greater than 0"),
        (format!("{GOOD}[timing]\nt_read = 'fast'\n"), "invalid value `fast`: expected a duration"),
        (format!("{GOOD}[controller]\ncores = []\n"), "controller.cores: at least one core is needed"),
        (
            format!("{GOOD}[controller]\ncores = [{{ name = 'a', clock = '0Hz' }}]\nfil_core = 0\n"),
            "controller.cores[0].clock",
        ),
        (format!("{GOOD}colour = 'blue'\n"), ":8:1: unknown field `colour`"),
        ("name = 'x'\n[geometry\n".to_string(), ":2:"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = write(&dir, &format!("c{i}.toml"), text);
        let e = fails(&["phys", &path]);
        assert!(e.contains(want), "case {i}: want {want:?}, got {e}");
    }
}

#[test]
fn impossible_workloads_name_the_flag() {
    let e = fails(&["phys", "--channels", "99"]);
    assert!(e.contains("workload: channels: must be between 1 and 8 (got 99)"), "{e}");
    let e = fails(&["phys", "--qd", "0"]);
    assert!(e.contains("workload: qd: must be at least 1"), "{e}");
    let e = fails(&["phys", "--rate=-5"]);
    assert!(e.contains("workload: rate: must be a positive number"), "{e}");
    let e = fails(&["phys", "--read-bytes", "lots"]);
    assert!(e.contains("--read-bytes"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "small.toml", GOOD);
    let e = fails(&["phys", &path, "--op", "program", "--count", "1000000"]);
    assert!(e.contains("workload: count: 1000000 programs do not fit"), "{e}");
}

#[test]
fn image_store_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let junk = write(&dir, "junk.img", "not an image");
    let e = fails(&["phys", "--store", "image", "--image", &junk]);
    assert!(e.contains("not a usable ssdlab NAND image"), "{e}");
    let e = fails(&["phys", "--store", "image"]);
    assert!(e.contains("--store image needs --image FILE"), "{e}");
}
