"""A sweep's table (`sweep.json`) as a pandas DataFrame."""

from __future__ import annotations

from typing import Any

import pandas as pd


# pandas 3 has a string dtype of its own (what read_parquet gives); before, text is object.
_TEXT = "str" if int(pd.__version__.split(".")[0]) >= 3 else "object"


def _series(column: dict[str, Any]) -> pd.Series:
    values = column["values"]
    kind = column["type"]
    missing = any(v is None for v in values)
    if kind == "int":
        return pd.Series(values, dtype="Int64" if missing else "int64")
    if kind == "real":
        return pd.Series([float("nan") if v is None else v for v in values], dtype="float64")
    if kind == "bool":
        return pd.Series(values, dtype="boolean" if missing else "bool")
    return pd.Series(values, dtype=_TEXT)


def to_frame(table: dict[str, Any]) -> pd.DataFrame:
    """The DataFrame of a table as `sweep.json` holds it: columns in order, typed."""
    if table.get("schema") != "ssdlab.sweep/1":
        raise ValueError(f"not a sweep table: schema {table.get('schema')!r}")
    df = pd.DataFrame({c["name"]: _series(c) for c in table["columns"]})
    df.attrs["axes"] = list(table["axes"])
    return df
