"""The Ray backend on a real local Ray cluster (`ray start --head`), from Python and from the
command line: the same table as the local backend; an unreachable address fails at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import ssdlab

if os.environ.get("SSDLAB_REQUIRE_ALL"):
    import ray  # noqa: F401  (CI installs Ray: these tests must run there)
else:
    ray = pytest.importorskip("ray")


# The `ray` command of this Python (beside its executable), else the one on PATH.
RAY = str(Path(sys.executable).with_name("ray")) if Path(sys.executable).with_name("ray").exists() else "ray"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    port = free_port()
    subprocess.run(
        [RAY, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats"],
        check=True, capture_output=True,
    )
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True)


def without_wall(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["wall_time_s"])


def test_a_ray_sweep_gives_the_local_table(cluster: str, small_sweep: dict, tmp_path: Path, cli: str,
                                           monkeypatch: pytest.MonkeyPatch):
    local = ssdlab.sweep(small_sweep, out=tmp_path / "local", progress=False)
    on_ray = ssdlab.sweep(small_sweep, out=tmp_path / "ray", backend="ray", ray_address=cluster, progress=False)
    assert on_ray.attrs["ssdlab"]["ran"] == 8 and on_ray.attrs["ssdlab"]["workers"] == 0
    pd.testing.assert_frame_equal(without_wall(on_ray), without_wall(local))
    again = ssdlab.sweep(small_sweep, out=tmp_path / "ray", backend="ray", ray_address=cluster, progress=False)
    assert again.attrs["ssdlab"]["ran"] == 0, "resumable on Ray too"

    # The command line's --ray, with a run that fails (isolated on Ray as locally).
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(
        f'seeds = [1, 2]\n[base]\ndevice = "{small_sweep["base"]["device"]}"\n'
        'workload = { rw = "randwrite", number_ios = 1500, numjobs = 1, size = "100%" }\n'
        '[[axis]]\nkey = "ftl.op"\nvalues = [0.1, 0.2]\n[[axis]]\nkey = "ftl.gc.victim"\nvalues = ["greedy", "fifo"]\n'
    )
    env = {**os.environ, "SSDLAB_PYTHON": sys.executable, "SSDLAB_TEST_PANIC_SEED": "2"}
    out = subprocess.run([cli, "sweep", str(sweep_file), "--ray", cluster, "--out", str(tmp_path / "cli")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "8 runs: 8 ran (4 failed)" in out.stdout
    cli_df = ssdlab.load_sweep(tmp_path / "cli")
    ok = cli_df["status"] == "ok"
    assert list(cli_df[~ok]["seed"]) == [2, 2, 2, 2]
    assert cli_df[~ok]["error"].str.startswith("panicked: SSDLAB_TEST_PANIC_SEED=2").all()
    pd.testing.assert_frame_equal(
        without_wall(cli_df[ok]).reset_index(drop=True), without_wall(local[local["seed"] == 1]).reset_index(drop=True),
        check_dtype=False,  # the failed rows make the command's integer columns nullable
    )


def test_an_unreachable_address_is_one_error_before_any_run(small_sweep: dict, tmp_path: Path, cli: str):
    started = time.monotonic()
    with pytest.raises(ssdlab.SsdlabError, match=r"^ray: cannot reach the Ray cluster at 127.0.0.1:1: "):
        ssdlab.sweep(small_sweep, out=tmp_path / "x", backend="ray", ray_address="127.0.0.1:1", progress=False)
    assert not (tmp_path / "x").exists(), "no run started"
    sweep_file = tmp_path / "s.json"
    sweep_file.write_text("[base]\ndevice = \"softssd\"\n")
    env = {**os.environ, "SSDLAB_PYTHON": sys.executable}
    out = subprocess.run([cli, "sweep", str(sweep_file), "--ray", "127.0.0.1:1", "--out", str(tmp_path / "y")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 1 and out.stderr.startswith("ssdlab: ray: cannot reach the Ray cluster at 127.0.0.1:1")
    assert out.stderr.count("\n") == 1 and not (tmp_path / "y").exists()
    print(f"unreachable address reported in {time.monotonic() - started:.1f}s")
