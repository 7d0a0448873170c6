"""Over-provisioning x GC victim policy on uniform and Zipf random writes, from Python.

    pip install .                 # at the repository root: builds the ssdlab package
    python examples/op_gc.py      # 36 runs on every core; a second run only reads the results

Runs the sweep in op-gc.toml (results in examples/op-gc-results), prints the mean write
amplification per setting, and draws WAF against over-provisioning, a line per victim policy,
for each access distribution.
"""

from pathlib import Path

import ssdlab

HERE = Path(__file__).resolve().parent

df = ssdlab.sweep(HERE / "op-gc.toml")
done = df.attrs["ssdlab"]
print(f"{done['total']} runs: {done['ran']} ran now, {done['skipped']} from earlier, {done['failed']} failed")

ok = df[df["status"] == "ok"]
waf = ok.pivot_table(
    index=["workload.random_distribution", "ftl.gc.victim"], columns="ftl.op", values="waf", aggfunc="mean"
)
print("\nmean WAF over the seeds:")
print(waf.round(2).to_string())

for dist in ("random", "zipf:1.2"):
    figure = ssdlab.plot(
        HERE / "op-gc-results",
        "ftl.op",
        "waf",
        hue="ftl.gc.victim",
        where={"workload.random_distribution": dist},
        out=HERE / "op-gc-results" / f"waf-{dist.replace(':', '')}.png",
    )
    print(f"figure: {figure}")
