"""A run's report with attribute access: `r.waf.waf`, `r.ops["read"].latency_ns.p99`."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Section(value)
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return [_wrap(v) for v in value]
    return value


class Section:
    """A part of a report: fields as attributes (or items), nested parts as sections."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        try:
            return _wrap(self._data[name])
        except KeyError:
            fields = ", ".join(self._data)
            raise AttributeError(f"no field {name!r} here (fields: {fields})") from None

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __dir__(self) -> list[str]:
        return sorted(set(self._data) | set(object.__dir__(self)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a report is read-only (to_dict() gives a copy to change)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Section) and self._data == other._data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._data)})"

    def keys(self) -> list[str]:
        """The field names."""
        return list(self._data)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy as plain dicts and lists (the JSON report's structure)."""
        return copy.deepcopy(self._data)


class Report(Section):
    """A run's report (schema `ssdlab.report/1`, documented in docs/report-schema.md)."""

    __slots__ = ()

    def __repr__(self) -> str:
        d = self._data
        return (
            f"Report(device={d['device']['name']!r}, seed={d['seed']}, "
            f"iops={d['total']['iops']:.0f}, waf={d['waf']['waf']:.3f})"
        )
