//! Front-end processes (the `nicfs mp-worker` binary) against one back end: on private files,
//! on regions of one shared file, and all on the same blocks of it, through leases. The
//! checker counts stale and torn reads.

use std::process::Command;

fn mpcheck(mode: &str, seed: u64) {
    mpcheck_with(mode, 4, seed);
}

fn mpcheck_with(mode: &str, workers: u64, seed: u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_nicfs"))
        .args(["mpcheck", "--workers", &workers.to_string(), "--mode", mode, "--ops", "1000"])
        .args(["--seed", &seed.to_string()])
        .output()
        .expect("run nicfs mpcheck");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "mode {mode} seed {seed} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("0 stale, 0 torn, 0 errors"), "seed {seed}: {stdout}");
}

#[test]
fn four_processes_on_private_files() {
    mpcheck("private", 11);
}

#[test]
fn four_processes_on_one_shared_file_through_leases() {
    for seed in [4, 5] {
        mpcheck("shared", seed);
    }
}

/// Eight processes (the most log spaces) all writing and reading the same eight blocks: every
/// read races writers from other front ends, so lease hand-over is what keeps it fresh.
#[test]
fn eight_processes_overlapping_on_the_same_blocks() {
    mpcheck_with("overlap", 8, 7);
}
