"""Kubernetes minor versions (``1.37``) as comparable values."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubedra.errors import UsageError

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str | None, *, what: str = "version") -> Version:
        """Parse ``1.37``, ``v1.37.2`` or ``1.37.0-beta.0`` (only major.minor matter to audit)."""
        m = _VERSION.match(str(text or "").strip())
        if not m:
            raise UsageError(f"invalid {what} {text!r}: expected MAJOR.MINOR such as 1.37")
        return cls(int(m.group(1)), int(m.group(2)))

    @classmethod
    def maybe(cls, text: object) -> Version | None:
        m = _VERSION.match(str(text).strip()) if text not in (None, "") else None
        return cls(int(m.group(1)), int(m.group(2))) if m else None

    def plus(self, minors: int) -> Version:
        return Version(self.major, self.minor + minors)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


_STABILITY = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_rank(api_version: str) -> tuple[int, int, int]:
    """Sort key for a Kubernetes API version name: GA > beta > alpha, then by number (v1 > v1beta2 > v1alpha3)."""
    m = _STABILITY.match(api_version)
    if not m:
        return (-1, 0, 0)
    major, level, n = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    stability = {"alpha": 0, "beta": 1, None: 2}[level]
    return (stability, major, n)


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> (``apps``, ``v1``); ``v1`` -> (``""``, ``v1``)."""
    if "/" in api_version:
        group, _, version = api_version.rpartition("/")
        return group, version
    return "", api_version
