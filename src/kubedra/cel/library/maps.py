"""Runtime helpers kubedra's environment rewrites to (``kubedra.@mapInsert``)."""

from __future__ import annotations

from typing import Any

from kubedra.cel.library.registry import (
    CELFunctionError,
    T,
    define,
)


def _map_insert(m: dict[Any, Any], k: Any, v: Any = None) -> dict[Any, Any]:
    out = dict(m)
    if v is None and isinstance(k, dict):
        for key in k:
            if key in out:
                raise CELFunctionError(f"insert failed: key {key} already exists")
        out.update(k)
        return out
    if k in out:
        raise CELFunctionError(f"insert failed: key {k} already exists")
    out[k] = v
    return out


_MT = T.Map(T.DYN, T.DYN)
define(
    "map_insert", "kubedra.@mapInsert", "kubedra_map_insert_key_value", _MT, [_MT, T.DYN, T.DYN], _map_insert
)
define("map_insert", "kubedra.@mapInsert", "kubedra_map_insert_map", _MT, [_MT, _MT], _map_insert)
