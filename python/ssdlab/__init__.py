"""ssdlab: simulate SSD firmware deterministically in virtual time, from Python.

>>> import ssdlab
>>> r = ssdlab.run("softssd", workload={"rw": "randwrite", "number_ios": 20000}, seed=1, blocks=64)
>>> r.waf.waf, r.ops["write"].latency_ns.p99
>>> df = ssdlab.sweep("examples/op-gc.toml")        # a pandas DataFrame, one row per run

A run is a pure function of (device, workload, seed): the same inputs give the same report,
as `ssdlab run` would write it. Simulations release the GIL. Bad input raises SsdlabError
with the command line's one-line message.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from . import _native
from ._native import SsdlabError
from ._report import Report

if TYPE_CHECKING:
    import pandas

__all__ = ["Calibration", "Report", "SsdlabError", "calibrate", "load_sweep", "plan", "plot", "presets", "run", "sweep", "__version__"]

__version__: str = _native.version()

PathLike = Union[str, "os.PathLike[str]"]


def presets() -> list[str]:
    """The names of the built-in device presets (`ssdlab presets`)."""
    return list(_native.presets())


def _device(device: Union[str, "os.PathLike[str]", Mapping[str, Any], None]) -> dict[str, Any]:
    """The request fields naming `device`: a preset, a TOML file, TOML text or a dict."""
    if device is None:
        return {}
    if isinstance(device, Mapping):
        return {"device_config": dict(device)}
    text = os.fspath(device)
    if text in presets() or Path(text).exists() or "\n" not in text:
        return {"base_device": text}
    return {"device_toml": text}


def run(
    device: Union[str, "os.PathLike[str]", Mapping[str, Any], None] = "softssd",
    workload: Union[Mapping[str, Any], str, "os.PathLike[str]", None] = None,
    seed: int = 1,
    *,
    precondition: str = "steady-state",
    blocks: int | None = None,
    set: Mapping[str, Any] | None = None,
) -> Report:
    """Simulates one run and returns its report, as `ssdlab run --json` writes it.

    device: a preset name, a device TOML file, TOML text, or a configuration as a dict.
    workload: fio options as a dict (on top of `ssdlab run`'s defaults, like its flags), or a
        fio job file; None runs the default workload.
    seed: the run's seed.
    precondition: none, seq-fill, random-fill, steady-state or steady-state:N.
    blocks: blocks per plane (shrinks the device, as --blocks).
    set: device settings by path, e.g. {"ftl.op": 0.2, "ftl.gc.victim": "cost-benefit"}.
    """
    base: dict[str, Any] = {"precondition": precondition, "set": dict(set or {})}
    if blocks is not None:
        base["blocks"] = blocks
    if isinstance(workload, Mapping):
        base["workload"] = dict(workload)
    elif workload is not None:
        base["job_file"] = os.fspath(workload)
    request: dict[str, Any] = {"base": base, "seed": seed, "dir": "."}
    dev = _device(device)
    if "base_device" in dev:
        base["device"] = dev.pop("base_device")
    request.update(dev)
    return Report(json.loads(_native.run(json.dumps(request))))


class Calibration(NamedTuple):
    """What `calibrate` returns."""

    fitted_toml: str
    """The fitted configuration as TOML (what `ssdlab calibrate --out` writes; `run` takes it)."""
    report: dict[str, Any]
    """The report (what `--report` writes): parameters before and after, every point, errors,
    the objective before and after, and the measurement (`measured=` reads it back)."""
    points: "pandas.DataFrame"
    """One row per plan point: measured and predicted (before and after the fit) IOPS, mean and
    p99 latency, and the relative error after."""


def calibrate(
    target: PathLike,
    preset: PathLike = "softssd",
    *,
    quick: bool = False,
    plan: PathLike | None = None,
    fit: list[str] | None = None,
    measured: PathLike | None = None,
    budget_s: float = 600.0,
    dilation: float = 1.0,
    metrics: list[str] | None = None,
    bound: float = 10.0,
    max_iters: int = 150,
    sim_ios: int = 1000,
    blocks: int | None = None,
    set: Mapping[str, Any] | None = None,
    threads: int | None = None,
    seed: int = 1,
    fio: PathLike = "fio",
    force_overwrite: bool = False,
) -> Calibration:
    """Fits `preset`'s timing to `target` as `ssdlab calibrate` does (docs/calibrate.md).

    target: a block device, a file (O_DIRECT) or an NBD URI, measured with fio; it is written
        over (the plan's region). With `measured`, only a label.
    measured: a calibration report (JSON) whose measurement is refitted instead of running fio.
    quick / plan: the six-point quick plan, or a plan TOML file (default: 26 points).
    fit: configuration paths to fit (default: the read, program and erase times, channel rate,
        DMA setup, fetch and completion costs).
    dilation: the target's time dilation (a `ssdlab serve --dilation D` device).
    metrics: which of "iops", "mean", "p99" the fit compares (default: all).
    set: settings of the starting configuration, e.g. {"ftl.cache.capacity": "1MiB"}.
    The other options are the command's (`ssdlab calibrate --help`).
    """
    import pandas as pd

    request: dict[str, Any] = {
        "target": os.fspath(target),
        "from": os.fspath(preset),
        "fit": list(fit or []),
        "plan": None if plan is None else os.fspath(plan),
        "quick": quick,
        "budget_s": budget_s,
        "dilation": dilation,
        "measured": None if measured is None else os.fspath(measured),
        "metrics": list(metrics or []),
        "bound": bound,
        "max_iters": max_iters,
        "sim_ios": sim_ios,
        "blocks": blocks,
        "set": [f"{k}={v}" for k, v in (set or {}).items()],
        "threads": threads,
        "seed": seed,
        "fio": os.fspath(fio),
        "force_overwrite": force_overwrite,
    }
    result = json.loads(_native.calibrate(json.dumps(request)))
    report = result["report"]
    rows = []
    for p in report["points"]:
        row: dict[str, Any] = {"point": p["point"]}
        for side in ("measured", "before", "after"):
            for k, v in (p.get(side) or {}).items():
                row[f"{side}_{k}"] = v
        for k, v in zip(("iops", "mean_us", "p99_us"), p["error"]):
            row[f"error_{k}"] = v
        rows.append(row)
    return Calibration(result["fitted_toml"], report, pd.DataFrame(rows))


def _source(sweep: Union[str, "os.PathLike[str]", Mapping[str, Any]]) -> tuple[str, str]:
    """A sweep as (source, kind) for the native module."""
    if isinstance(sweep, Mapping):
        return json.dumps(sweep), "json"
    text = os.fspath(sweep)
    if "\n" not in text and (Path(text).exists() or text.endswith(".toml")):
        return text, "path"
    return text, "toml"


def plan(sweep: Union[str, "os.PathLike[str]", Mapping[str, Any]], *, out: PathLike | None = None) -> "pandas.DataFrame":
    """The runs of a sweep, without running them (`ssdlab sweep --dry-run`): one row per run
    with its axis values, seed, content hash and the equivalent `ssdlab run` command."""
    import pandas as pd

    source, kind = _source(sweep)
    result = json.loads(_native.plan(source, kind, ".", None if out is None else os.fspath(out)))
    return pd.DataFrame(result["runs"])


def sweep(
    sweep: Union[str, "os.PathLike[str]", Mapping[str, Any]],
    *,
    out: PathLike | None = None,
    workers: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    table: str | None = None,
    retry_failed: bool = False,
    time_budget: str | None = None,
    memory_budget: str | None = None,
    progress: bool = True,
) -> "pandas.DataFrame":
    """Runs a sweep (`ssdlab sweep`) and returns its table: one row per run with every axis
    value, the seed, the status and error, the headline metrics, and the report's path.

    sweep: a sweep TOML file, TOML text, or the same structure as a dict.
    out: the results directory (default: the file's `out`, else NAME-results beside it, or
        ./sweep-results for text and dicts). Runs whose results are there are not run again.
    workers: local worker processes (default: one per core).
    backend: "local", or "ray" (each run a Ray task; needs `pip install 'ssdlab[ray]'`).
    ray_address: the cluster for "ray": HOST:PORT, ray://HOST:PORT, auto, or local (default:
        the cluster this process is connected to, else a local one started for the sweep).
    table: "parquet" or "csv" (default: the file's, else parquet).
    retry_failed: run again the runs recorded as failed.
    time_budget, memory_budget: per run, e.g. "10m" and "4GiB"; over them a run is killed
        and recorded as failed.
    progress: draw a progress bar on a terminal.

    The DataFrame's attrs["ssdlab"] says how many runs ran, were skipped or failed.
    """
    if backend == "ray" and ray_address is None:
        ray_address = _connected_ray()
    source, kind = _source(sweep)
    options = {
        "out": None if out is None else os.fspath(out),
        "workers": workers,
        "backend": backend,
        "ray_address": ray_address,
        "python": sys.executable,
        "table": table,
        "retry_failed": retry_failed,
        "time_budget": time_budget,
        "memory_budget": memory_budget,
        "progress": progress,
    }
    table_json, summary = _native.sweep(source, kind, ".", json.dumps(options))
    from ._table import to_frame

    df = to_frame(json.loads(table_json))
    df.attrs["ssdlab"] = json.loads(summary)
    return df


def _connected_ray() -> str | None:
    """The address of the Ray cluster this process is connected to, if any."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return str(ray.get_runtime_context().gcs_address)
    return None


def plot(
    results: PathLike,
    x: str,
    y: str,
    *,
    hue: str | None = None,
    where: Mapping[str, Any] | None = None,
    out: PathLike | None = None,
) -> Path:
    """Draws a metric of a sweep's results against an axis (`ssdlab sweep plot`): a line (or
    bars, for a text axis) per value of `hue`, the mean over the seeds with ±1 standard
    deviation. Every other axis with several values must be fixed in `where`. Writes PNG or
    SVG by the extension of `out` (default RESULTS/Y-by-X[-HUE].png) and returns the file."""
    filters = [f"{k}={v}" for k, v in (where or {}).items()]
    return Path(_native.plot(os.fspath(results), x, y, hue, filters, None if out is None else os.fspath(out)))


def load_sweep(results: PathLike) -> "pandas.DataFrame":
    """The table of a sweep's results directory (or of the directory of its table file)."""
    from ._table import to_frame

    path = Path(results)
    manifest = path / "sweep.json" if path.is_dir() else path.parent / "sweep.json"
    return to_frame(json.loads(manifest.read_text()))
