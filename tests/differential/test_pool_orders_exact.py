"""kubedra.allocator.orders searches once for all the pool and slice orders alike as far as a search reads; on
generated 1.34 scenarios that answers exactly as a search of every order does (no oracle needed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kubedra.allocator import orders
from kubedra.allocator.pools import Pool

from .compare import kubedra_outcome
from .scenarios import as_134, sample

Visit = Callable[[list[Pool]], Any]


def _every_order(walk: Callable[..., int]) -> Callable[..., int]:
    """``_Orders.walk`` told that each search read every pool and slice: it then searches every order."""

    def walk_all(self: orders._Orders, visit: Visit, most: int) -> int:
        def read_all(pools: list[Pool]) -> list[tuple[Pool, Any]]:
            visit(pools)
            return [(p, p.slices[-1] if p.slices else None) for p in pools]

        return walk(self, read_all, 10**9)

    return walk_all


def test_one_search_per_beginning_answers_as_every_order(monkeypatch: pytest.MonkeyPatch) -> None:
    walk = orders._Orders.walk
    seen: list[tuple[int, int]] = []  # (orders, searches) of each scenario where orders were walked

    def counted(self: orders._Orders, visit: Visit, most: int) -> int:
        calls = walk(self, visit, most)
        seen.append((self.count(), calls))
        return calls

    several = 0
    for doc in (as_134(d) for d in sample(300, 134)):
        monkeypatch.setattr(orders._Orders, "walk", counted)
        before = len(seen)
        ours = kubedra_outcome(doc, timeout=10, version="v1.34.13")
        if len(seen) == before:
            continue
        monkeypatch.setattr(orders._Orders, "walk", _every_order(walk))
        every = kubedra_outcome(doc, timeout=10, version="v1.34.13")
        assert json.dumps(ours, sort_keys=True) == json.dumps(every, sort_keys=True), json.dumps(doc)
        several += len(ours.get("possible") or ()) > 1
    # the sample exercises what is claimed: orders were walked, fewer searches than orders, several answers
    assert len(seen) >= 20
    assert sum(n > calls for n, calls in seen) >= 10
    assert several >= 3
