//! The commands work on a fresh machine and their outputs are well formed and reproducible.

use crate::ok;

#[test]
fn presets_are_listed_and_shown_with_their_comments() {
    let list = ok(&["presets"]);
    for name in ["softssd", "pipessd", "hostftl-array"] {
        assert!(list.contains(name), "{list}");
        assert!(ok(&["presets", name]).contains("PRESETS.md"), "preset {name} cites PRESETS.md");
    }
}

#[test]
fn resolved_config_runs_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = ok(&["config", "pipessd"]);
    assert!(text.contains("t_prog = \"400us\""), "{text}");
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, text).unwrap();
    let out = ok(&["phys", path.to_str().unwrap(), "--count", "200"]);
    assert!(out.starts_with("device pipessd"), "{out}");
}

#[test]
fn same_seed_same_json_report() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, name: &str| {
        let path = dir.path().join(name);
        ok(&[
            "phys",
            "pipessd",
            "--op",
            "mixed",
            "--pattern",
            "random",
            "--count",
            "3000",
            "--seed",
            seed,
            "--json",
            path.to_str().unwrap(),
        ]);
        std::fs::read_to_string(path).unwrap()
    };
    let (a, b, c) = (run("7", "a.json"), run("7", "b.json"), run("8", "c.json"));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["read"]["count"].as_u64().unwrap() + v["program"]["count"].as_u64().unwrap(), 3000);
}

#[test]
fn image_store_keeps_data_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("dev.img");
    let img = img.to_str().unwrap();
    let dev = dir.path().join("small.toml");
    let small = "name = 'small'\n[geometry]\nchannels = 2\nways = 2\nblocks = 16\npages = 32\npage_size = '16KiB'\n[ftl]\nop = 0.5\ncache = { capacity = '1MiB' }\n";
    std::fs::write(&dev, small).unwrap();
    let dev = dev.to_str().unwrap();
    ok(&["phys", dev, "--op", "program", "--count", "64", "--store", "image", "--image", img]);
    assert!(std::path::Path::new(img).exists());
    // The reopened image remembers what was programmed: programming again is refused cleanly.
    let e =
        crate::fails(&["phys", dev, "--op", "program", "--count", "64", "--store", "image", "--image", img]);
    assert!(e.contains("block 0 already holds data and this workload programs it"), "{e}");
    let out = ok(&["phys", dev, "--op", "read", "--count", "64", "--store", "image", "--image", img]);
    assert!(out.contains("read"), "{out}");
}
