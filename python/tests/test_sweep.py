"""ssdlab.sweep: the DataFrame, the files, resuming, failures, and the command's results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pandas as pd
import pytest

import ssdlab
from conftest import WORKLOAD, deterministic


def test_a_sweep_is_a_dataframe_and_a_second_call_runs_nothing(small_sweep: dict, tmp_path: Path):
    out = tmp_path / "res"
    df = ssdlab.sweep(small_sweep, out=out, progress=False)
    assert len(df) == 8 and list(df["run"]) == list(range(8))
    assert df.attrs["ssdlab"]["ran"] == 8 and df.attrs["ssdlab"]["skipped"] == 0
    assert list(df.columns[:4]) == ["run", "ftl.op", "ftl.gc.victim", "seed"]
    assert (df["status"] == "ok").all() and df["waf"].notna().all()
    assert df["ftl.op"].dtype == "float64" and df["seed"].dtype == "int64"
    report = json.loads((out / df.loc[0, "report"]).read_text())
    assert report["waf"]["waf"] == df.loc[0, "waf"]

    again = ssdlab.sweep(small_sweep, out=out, progress=False)
    assert again.attrs["ssdlab"]["ran"] == 0 and again.attrs["ssdlab"]["skipped"] == 8
    pd.testing.assert_frame_equal(again, df)
    pd.testing.assert_frame_equal(ssdlab.load_sweep(out), df)
    parquet = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(parquet, df, check_dtype=False)


def test_plan_lists_runs_and_csv_tables(small_sweep: dict, tmp_path: Path):
    p = ssdlab.plan(small_sweep)
    assert len(p) == 8 and p.loc[7, "command"].endswith("--seed 2")
    df = ssdlab.sweep({**small_sweep, "seeds": [1]}, out=tmp_path / "c", table="csv", workers=1, progress=False)
    csv = pd.read_csv(tmp_path / "c" / "results.csv")
    assert list(csv["waf"]) == list(df["waf"])


def test_a_failing_run_is_a_row_and_the_rest_run(small_sweep: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SSDLAB_TEST_PANIC_SEED", "2")
    df = ssdlab.sweep(small_sweep, out=tmp_path / "f", progress=False)
    failed = df[df["status"] == "failed"]
    assert list(failed["seed"]) == [2, 2, 2, 2]
    assert failed["error"].str.startswith("panicked: SSDLAB_TEST_PANIC_SEED=2").all()
    assert failed["waf"].isna().all() and df[df["status"] == "ok"]["waf"].notna().all()


def test_the_table_matches_the_commands_sweep_and_single_runs(small_sweep: dict, tmp_path: Path, cli: str):
    py = ssdlab.sweep(small_sweep, out=tmp_path / "py", progress=False)
    sweep_file = tmp_path / "s.json"
    sweep_file.write_text(json.dumps(small_sweep))
    toml = tmp_path / "s.toml"
    toml.write_text(
        f'seeds = [1, 2]\n[base]\ndevice = "{small_sweep["base"]["device"]}"\n'
        'workload = { rw = "randwrite", number_ios = 1500, numjobs = 1, size = "100%" }\n'
        '[[axis]]\nkey = "ftl.op"\nvalues = [0.1, 0.2]\n[[axis]]\nkey = "ftl.gc.victim"\nvalues = ["greedy", "fifo"]\n'
    )
    subprocess.run([cli, "sweep", str(toml), "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    cli_df = ssdlab.load_sweep(tmp_path / "cli")
    cols = [c for c in py.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(py[cols], cli_df[cols])
    row = py.iloc[5]
    single = ssdlab.run(small_sweep["base"]["device"], workload=WORKLOAD, seed=int(row["seed"]),
                        set={"ftl.op": row["ftl.op"], "ftl.gc.victim": row["ftl.gc.victim"]})
    assert deterministic(single.to_dict()) == deterministic(json.loads((tmp_path / "py" / row["report"]).read_text()))
    assert single.waf.waf == row["waf"]


def test_plot_draws_the_results(small_sweep: dict, tmp_path: Path):
    out = tmp_path / "p"
    ssdlab.sweep(small_sweep, out=out, progress=False)
    png = ssdlab.plot(out, "ftl.op", "waf", hue="ftl.gc.victim")
    assert png == out / "waf-by-ftl.op-ftl.gc.victim.png" and png.read_bytes()[1:4] == b"PNG"
    svg = ssdlab.plot(out, "ftl.gc.victim", "write_p99_us", where={"ftl.op": 0.2}, out=tmp_path / "w.svg")
    assert "write_p99_us" in svg.read_text()
    with pytest.raises(ssdlab.SsdlabError, match="axis `ftl.gc.victim` has 2 values here"):
        ssdlab.plot(out, "ftl.op", "waf")


def test_ctrl_c_stops_a_sweep_and_keeps_what_finished(small_sweep: dict, tmp_path: Path):
    long = {**small_sweep, "base": {**small_sweep["base"], "workload": {**WORKLOAD, "number_ios": 10**8, "loops": 10**5, "size": "16m"}}}
    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt, match="sweep interrupted"):
        ssdlab.sweep(long, out=tmp_path / "i", progress=False)
    assert not list((tmp_path / "i" / "tmp").glob("*")), "the runs in flight were stopped"
    assert ssdlab.load_sweep(tmp_path / "i").empty, "no run finished, none is in the table"
