"""Every path into a parsed document, for the line-table tests (each path's line is asked for)."""

from __future__ import annotations

from typing import Any


def all_paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """``prefix`` and the path of every mapping value and list item under ``obj``, depth first."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += all_paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += all_paths(v, (*prefix, i))
    return out
