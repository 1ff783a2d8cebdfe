"""The candidates of one preemptor class in node order, for kube-scheduler's shortlist: preemption stops after
the first ``k`` candidates (:mod:`kubedra.scheduler.preemption`) and takes the best of those. A segment tree over
the node indexes keeps, per range, how many candidates it holds and the least key among them, so that a node's
change and the question "the best of the first k" each cost O(log nodes), not a walk over the shortlist."""

from __future__ import annotations

import math
from typing import Any

NONE: tuple[Any, ...] = (math.inf,)  # the key of a node that is no candidate: above every real key


class Shortlist:
    __slots__ = ("best", "count", "size")

    def __init__(self, n: int) -> None:
        size = 1
        while size < n:
            size *= 2
        self.size = size
        self.count = [0] * (2 * size)
        self.best: list[tuple[Any, ...]] = [NONE] * (2 * size)

    def set(self, i: int, key: tuple[Any, ...] | None) -> None:
        """Node ``i`` is a candidate with ``key`` (keys must differ between nodes), or no candidate (None)."""
        count, best = self.count, self.best
        p = i + self.size
        count[p], best[p] = (0, NONE) if key is None else (1, key)
        p //= 2
        while p:
            a, b = 2 * p, 2 * p + 1
            count[p] = count[a] + count[b]
            best[p] = best[a] if best[a] <= best[b] else best[b]
            p //= 2

    def total(self) -> int:
        return self.count[1]

    def best_of_first(self, k: int) -> tuple[Any, ...] | None:
        """The least key among the ``k`` candidates of lowest index (all of them where there are fewer)."""
        count, best = self.count, self.best
        if not count[1] or k <= 0:
            return None
        if count[1] <= k:
            return best[1]
        p, found = 1, NONE
        while p < self.size:
            left = 2 * p
            if count[left] >= k:
                p = left
            else:  # the whole left half is in the first k
                if best[left] < found:
                    found = best[left]
                k -= count[left]
                p = left + 1
        return best[p] if best[p] < found else found
