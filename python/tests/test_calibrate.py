"""ssdlab.calibrate: refitting a saved measurement (no fio, no device) moves the fitted
parameter toward what the measurement implies, and returns the point table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ssdlab

PLAN = {
    "region": "8MiB",
    "runtime": 1.0,
    "ramp": 0.5,
    "point": [
        {"rw": "randread", "bs": "4KiB", "iodepth": 1},
        {"rw": "randread", "bs": "4KiB", "iodepth": 4},
    ],
}
# A 1 MiB data cache (softssd's own holds the whole region, and reads would not reach flash).
SET = {"ftl.cache.capacity": "1MiB"}


def _measurement(path: Path, points: list[dict[str, float]]) -> Path:
    m = {
        "target": "saved",
        "capacity": 8 << 20,
        "dilation": 1.0,
        "plan": PLAN,
        "points": [dict(p, ios=1000) for p in points],
        "seconds": 0.0,
    }
    path.write_text(json.dumps({"measurement": m}))
    return path


def _fit(measured: Path, max_iters: int) -> ssdlab.Calibration:
    return ssdlab.calibrate(
        "saved",
        "softssd",
        measured=measured,
        fit=["timing.t_read"],
        metrics=["mean"],
        set=SET,
        max_iters=max_iters,
        sim_ios=200,
        seed=3,
    )


def test_calibrate_refits_a_saved_measurement_toward_a_slower_read(tmp_path: Path):
    # What the preset predicts itself, from a fit that stops at once.
    first = _fit(_measurement(tmp_path / "any.json", [{"iops": 1000.0, "mean_us": 1000.0, "p99_us": 2000.0}] * 2), 0)
    before = [(p["before"]["mean_us"], p["before"]["iops"]) for p in first.report["points"]]
    # A drive whose every read takes 100 us longer.
    slow = [{"iops": iops * mean / (mean + 100.0), "mean_us": mean + 100.0, "p99_us": 2.0 * (mean + 100.0)} for mean, iops in before]
    c = _fit(_measurement(tmp_path / "slow.json", slow), 40)
    assert isinstance(c, ssdlab.Calibration)
    (param,) = c.report["parameters"]
    assert param["path"] == "timing.t_read"
    assert param["after"] > param["before"] * 1.2, param
    assert c.report["cost_after"] < c.report["cost_before"]
    assert list(c.points["point"]) == [p["point"] for p in c.report["points"]] and len(c.points) == 2
    assert (c.points["after_mean_us"] > c.points["before_mean_us"]).all()
    assert "t_read" in c.fitted_toml
    # Deterministic: the same inputs give the same fit.
    again = _fit(tmp_path / "slow.json", 40)
    assert again.report["parameters"] == c.report["parameters"]


def test_calibrate_errors_are_one_line(tmp_path: Path):
    with pytest.raises(ssdlab.SsdlabError, match="--measured .*missing.json"):
        ssdlab.calibrate("saved", measured=tmp_path / "missing.json")
    with pytest.raises(ssdlab.SsdlabError, match="--metrics speed"):
        ssdlab.calibrate("saved", metrics=["speed"], measured=tmp_path / "missing.json")
