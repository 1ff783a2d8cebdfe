"""Kubernetes versions in a plan: the target, the minor-by-minor hops, pool sizes given on the command line."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kubedra.errors import UsageError
from kubedra.k8s.versions import require_supported

_VERSION = re.compile(r"^v?1\.(\d+)(?:\.(\d+))?")


def parse_target(text: str) -> tuple[int, str]:
    """(minor, full version) of --target-version: ``1.37`` -> (37, "1.37.0"); ``1.37.3`` -> (37, "1.37.3")."""
    m = _VERSION.match(text.strip())
    if not m:
        raise UsageError(f"invalid --target-version {text!r} (expected e.g. 1.37)")
    minor = require_supported(text, what="--target-version").minor
    return minor, f"1.{minor}.{int(m.group(2) or 0)}"


def minor_of(version: str) -> int | None:
    m = _VERSION.match(version.strip()) if version else None
    return int(m.group(1)) if m else None


def parse_pool_sizes(items: Sequence[str]) -> dict[str, int]:
    """``--pool-wave-size POOL=PERCENT`` (repeatable) → {pool: percent}."""
    out: dict[str, int] = {}
    for item in items:
        pool, sep, pct = item.partition("=")
        if not sep or not pool or not pct.strip().isdigit() or not 1 <= int(pct) <= 100:
            raise UsageError(
                f"--pool-wave-size wants POOL=PERCENT with a percentage from 1 to 100, not {item!r}"
            )
        out[pool.strip()] = int(pct)
    return out


def hops(current: str, target_minor: int) -> list[str]:
    cur = minor_of(current)
    if cur is None or cur >= target_minor:
        return []
    return [f"1.{m}" for m in range(cur + 1, target_minor + 1)]
