"""Shared fixtures: a small device, a small sweep, and the ssdlab command (for comparisons)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# 2 ch x 2 ways x 2 planes x 64 blocks x 32 pages of 16 KiB, 15% spare: a run takes
# milliseconds. The Rust tests' small device.
SMALL = (Path(__file__).resolve().parents[2] / "crates/ssdlab/tests/it/small.toml").read_text()

WORKLOAD = {"rw": "randwrite", "number_ios": 1500, "numjobs": 1, "size": "100%"}


@pytest.fixture
def device(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path


@pytest.fixture
def small_sweep(device: Path) -> dict:
    return {
        "base": {"device": str(device), "workload": dict(WORKLOAD)},
        "axis": [
            {"key": "ftl.op", "values": [0.1, 0.2]},
            {"key": "ftl.gc.victim", "values": ["greedy", "fifo"]},
        ],
        "seeds": [1, 2],
    }


@pytest.fixture
def cli() -> str:
    """The ssdlab command ($SSDLAB_BIN, else one on PATH); tests that compare with it need it."""
    path = os.environ.get("SSDLAB_BIN") or shutil.which("ssdlab")
    if not path:
        if os.environ.get("SSDLAB_REQUIRE_ALL"):
            pytest.fail("SSDLAB_BIN is not set")
        pytest.skip("no ssdlab command: set SSDLAB_BIN")
    return path


def deterministic(report: dict) -> dict:
    """A report without its wall-clock fields."""
    return {k: v for k, v in report.items() if k not in ("wall_time_s", "requests_per_wall_sec")}
