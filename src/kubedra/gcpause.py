"""Pause Python's cyclic garbage collector while building large, acyclic object trees.

Reading manifests and building the model makes hundreds of thousands of small dicts, lists and dataclasses
that stay alive; each allocation burst triggers collections that rescan all of them, for nothing (they hold no
reference cycles: refcounting frees what dies). Measured on upstream scheduler_perf's 5000pods_500nodes file:
``kubedra simulate -f`` 7.6 s CPU with the collector running, 3.4 s with it paused, same peak RSS
(benchmarks/simulate.py, docs/performance.md). A dynamic-MIG node: 46 vs 17 ms.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block (refcounting still frees everything acyclic); the collector's
    previous state is restored on exit. Nesting is fine: only the outermost block re-enables it.

    ``freeze``: before re-enabling, move every object alive to the collector's permanent generation
    (``gc.freeze()``), so that the first collection after the block does not walk all that was built (1-3 s
    for a large input). Only for a command that ends soon after: cycles among frozen objects are never freed.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze:
                gc.freeze()
            gc.enable()
