"""Pause Python's cyclic garbage collector while building large, acyclic object trees.

Reading manifests and building the model makes hundreds of thousands of small dicts, lists and dataclasses
that stay alive; each allocation burst triggers collections that rescan all of them, for nothing (they hold no
reference cycles: refcounting frees what dies). Measured on upstream scheduler_perf's 5000pods_500nodes file:
``kubedra simulate -f`` 7.6 s CPU with the collector running, 3.4 s with it paused, same peak RSS
(benchmarks/simulate.py, docs/performance.md). A dynamic-MIG node: 46 vs 17 ms.

The same holds at the end: freeing all of it one object at a time is work no one sees. A verb that has written
everything says so (:func:`nothing_left_to_free`), and ``kubedra.cli.main``, run as the program, then ends the
process at once (:func:`end_at_once`).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
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


_END_AT_ONCE = [False]  # set by a verb that has written everything (see nothing_left_to_free)


def nothing_left_to_free() -> None:
    """Say that the running verb has written all it writes (its files closed; stdout and stderr are flushed by
    :func:`end_at_once`): the program may end without freeing what the verb built. Freeing an audit's 10,000
    objects and their findings one by one, object after object, is CPU spent on nothing the user sees."""
    _END_AT_ONCE[0] = True


def ending_at_once_allowed(reset: bool = False) -> bool:
    """Whether the verb said :func:`nothing_left_to_free` (``reset``: forget it, before a verb runs)."""
    allowed = _END_AT_ONCE[0]
    if reset:
        _END_AT_ONCE[0] = False
    return allowed


def end_at_once(code: int | None) -> None:
    """End the process with exit status ``code`` (None: 0) without freeing its objects or tearing the
    interpreter down: flush stdout and stderr, run the ``atexit`` functions, ``os._exit``. Returns (and the
    caller ends as usual) when a flush fails or another thread still runs, which the usual end would wait for."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    os._exit(0 if code is None else code)
