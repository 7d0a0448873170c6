"""ssdlab.run, presets, reports, errors, the GIL, and the stubs."""

from __future__ import annotations

import ast
import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

import ssdlab
from conftest import SMALL, WORKLOAD, deterministic


def test_presets_are_the_commands():
    names = ssdlab.presets()
    assert "softssd" in names and "mqsim-default" in names


def test_a_run_is_a_report_with_attribute_access(device: Path):
    r = ssdlab.run(str(device), workload=WORKLOAD, seed=3)
    assert isinstance(r, ssdlab.Report)
    assert r.seed == 3 and r.device.name == "small"
    assert r.ops["write"].count == 1500 == r.total.count
    assert r.ops["write"].latency_ns.p99 >= r.ops["write"].latency_ns.p50 > 0
    assert r.waf.waf == r.to_dict()["waf"]["waf"]
    assert r.workload[0].rw == "randwrite"
    assert "waf" in dir(r)
    with pytest.raises(AttributeError, match="no field 'wafer'"):
        r.wafer
    d = r.to_dict()
    d["seed"] = 99
    assert r.seed == 3, "to_dict is a copy"


def test_same_inputs_same_report_and_config_as_dict_or_toml(device: Path):
    a = ssdlab.run(str(device), workload=WORKLOAD, seed=5).to_dict()
    b = ssdlab.run(SMALL, workload=WORKLOAD, seed=5).to_dict()
    c = ssdlab.run(a["device"], workload=WORKLOAD, seed=5).to_dict()
    assert deterministic(a) == deterministic(b) == deterministic(c)
    other = ssdlab.run(str(device), workload=WORKLOAD, seed=6).to_dict()
    assert deterministic(other) != deterministic(a)


def test_settings_blocks_and_precondition(device: Path):
    r = ssdlab.run(str(device), workload=WORKLOAD, set={"ftl.op": 0.3, "ftl.gc.victim": "fifo"}, precondition="none")
    assert r.device.ftl.op == 0.3 and r.device.ftl.gc.victim == "fifo"
    assert r.initial_state == "fresh"
    assert ssdlab.run("softssd", workload={"number_ios": 100}, blocks=32).device.geometry.blocks == 32


def test_the_report_is_the_commands(device: Path, tmp_path: Path, cli: str):
    out = tmp_path / "cli.json"
    subprocess.run(
        [cli, "run", str(device), "--set", "ftl.op=0.2", "--rw", "randwrite", "--number-ios", "1500",
         "--numjobs", "1", "--size", "100%", "--seed", "4", "--json", str(out)],
        check=True, capture_output=True,
    )
    py = ssdlab.run(str(device), workload=WORKLOAD, seed=4, set={"ftl.op": 0.2}).to_dict()
    assert deterministic(py) == deterministic(json.loads(out.read_text()))


def test_errors_are_exceptions_with_the_commands_message(device: Path, tmp_path: Path, cli: str):
    with pytest.raises(ssdlab.SsdlabError, match="no preset or file named `nosuch`"):
        ssdlab.run("nosuch")
    with pytest.raises(ssdlab.SsdlabError, match="ftl.opp: unknown field `opp`"):
        ssdlab.run(str(device), set={"ftl.opp": 0.2})
    with pytest.raises(ssdlab.SsdlabError, match="workload.rw: option 'rw': invalid value 'sideways'"):
        ssdlab.run(str(device), workload={"rw": "sideways"})
    bad = tmp_path / "bad.toml"
    bad.write_text(f'[base]\ndevice = "{device}"\n[[axis]]\nkey = "ftl.op"\nvalues = [0.1, "lots"]\n')
    with pytest.raises(ssdlab.SsdlabError) as e:
        ssdlab.sweep(bad)
    line = subprocess.run([cli, "sweep", str(bad)], capture_output=True, text=True).stderr.strip()
    assert line == f"ssdlab: {e.value}"
    assert "axis ftl.op: value lots: ftl.op: invalid type" in line


def test_runs_release_the_gil(device: Path):
    result = {}
    worker = threading.Thread(target=lambda: result.update(r=ssdlab.run(str(device), workload={**WORKLOAD, "number_ios": 40000})))
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1  # this thread runs Python while the other simulates
        time.sleep(0.001)
    worker.join()
    assert result["r"].total.count == 40000
    assert ticks >= 5, "the main thread was blocked while the simulation ran"


def test_stubs_declare_every_native_function():
    stub = Path(ssdlab.__file__).with_name("_native.pyi")
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    native = {n for n in dir(ssdlab._native) if not n.startswith("_")}
    assert native == declared
    assert (Path(ssdlab.__file__).parent / "py.typed").exists()


def test_report_stubs_name_real_fields(device: Path):
    """Every field the Report stub declares is in a real report, and every top-level field is declared."""
    tree = ast.parse((Path(ssdlab.__file__).parent / "_report.pyi").read_text())
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}

    def fields(name: str) -> dict[str, str]:
        return {a.target.id: ast.unparse(a.annotation) for a in classes[name].body if isinstance(a, ast.AnnAssign)}

    report = ssdlab.run(str(device), workload={**WORKLOAD, "rw": "randrw"}).to_dict()
    # `flows_unattributed` is there only with two or more flows (docs/report-schema.md).
    assert set(fields("Report")) - {"flows_unattributed"} == set(report)
    for field, kind in fields("Report").items():
        if kind in classes and kind != "Section":
            assert set(fields(kind)) == set(report[field]), field
    assert set(fields("OpReport")) == set(report["ops"]["read"])
    # A flow's `cache` is there only when ftl.cache.partition splits the cache, its `cmt` and
    # `flash` only with two or more flows (docs/report-schema.md).
    assert set(fields("FlowReport")) - {"cache", "cmt", "flash"} == set(report["flows"][0])
    assert set(fields("Latency")) == set(report["ops"]["read"]["latency_ns"])
    assert set(fields("HitRatio")) == set(report["cache"]["data"])
