"""Pause the cyclic garbage collector while building large, acyclic object trees.

A dynamic-MIG node is ~10k small dicts; with the collector running, its generation scans cost
more than building the dicts (measured 46 vs 17 ms per 8 x H100 node).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
