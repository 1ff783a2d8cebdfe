"""Kubernetes minor releases: the one parser and the one list of what kubedra supports.

The data lives in ``kubedra/data/versions.yaml``; :data:`SUPPORTED`, :data:`DEFAULT_TARGET`, the partly
known range, the behaviour that changed in a minor (:func:`since`, :func:`holds`), the API versions that moved
(:func:`api`) and the testbed's releases
(:func:`testbed`) come from it, so adding a minor is a data change.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from kubedra.errors import UsageError
from kubedra.k8s import datafiles

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


@dataclass(frozen=True, order=True)
class Version:
    """A Kubernetes minor release (``1.37``); patch and pre-release parts are ignored."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str | None, *, what: str = "version") -> Version:
        """Parse ``1.37``, ``v1.37.2`` or ``1.37.0-beta.0`` (only major.minor matter to kubedra)."""
        m = _VERSION.match(str(text or "").strip())
        if not m:
            raise UsageError(f"invalid {what} {text!r}: expected MAJOR.MINOR such as {DEFAULT_TARGET}")
        return cls(int(m.group(1)), int(m.group(2)))

    @classmethod
    def maybe(cls, text: object) -> Version | None:
        m = _VERSION.match(str(text).strip()) if text not in (None, "") else None
        return cls(int(m.group(1)), int(m.group(2))) if m else None

    def pair(self) -> tuple[int, int]:
        """``(major, minor)``, for code that compares plain tuples."""
        return self.major, self.minor

    def plus(self, minors: int) -> Version:
        return Version(self.major, self.minor + minors)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = datafiles.load("versions.yaml")
    return data


SUPPORTED: tuple[str, ...] = tuple(str(Version.parse(v)) for v in _data()["supported"])
DEFAULT_TARGET: str = str(Version.parse(_data()["default"]))
OLDEST: str = SUPPORTED[0]
NEWEST: str = SUPPORTED[-1]
PARTIAL_MIN = Version.parse(_data()["partial"]["minimum"])
PARTIAL_MAX = Version.parse(_data()["partial"]["maximum"])
PARTIAL_COVERS: str = _data()["partial"]["covers"]


def supported_range() -> str:
    return f"{OLDEST}-{NEWEST}"


def is_supported(version: str | Version) -> bool:
    return str(version) in SUPPORTED


def require_supported(text: str | Version, *, what: str = "Kubernetes version") -> Version:
    """The release, or a :class:`UsageError` (exit 2) naming the supported range."""
    v = text if isinstance(text, Version) else Version.parse(text, what=what)
    if not is_supported(v):
        raise UsageError(f"unsupported {what} {text} (supported: {supported_range()})")
    return v


def check_target(
    text: str, *, partial_ok: bool = False, what: str = "--target-version"
) -> tuple[str, str | None]:
    """Normalise a target release; returns (``"1.37"``, warning or None).

    Unsupported releases are a :class:`UsageError` naming the supported range; with ``partial_ok`` a release
    in the partly known range is accepted with a warning saying what kubedra knows of it.
    """
    v = Version.parse(text, what=what)
    if is_supported(v):
        return str(v), unverified_warning(v)
    if partial_ok and PARTIAL_MIN <= v <= PARTIAL_MAX:
        return str(v), (
            f"Kubernetes {v} is known only partly ({PARTIAL_COVERS}); "
            f"kubedra fully supports {supported_range()}"
        )
    known = f"; {PARTIAL_MIN}-{PARTIAL_MAX} partly" if partial_ok else ""
    raise UsageError(f"unsupported {what} {v} (supported: {supported_range()}{known})")


@functools.cache
def since(fact: str) -> Version:
    """The first release where a named behaviour ``fact`` holds (``since`` in data/versions.yaml)."""
    try:
        return Version.parse(_data()["since"][fact])
    except KeyError:
        raise KeyError(f"{fact!r} is not a fact of data/versions.yaml (since)") from None


def holds(fact: str, release: str | Version) -> bool:
    """Whether the behaviour ``fact`` holds at ``release`` (``1.37``, ``v1.37.2`` or a :class:`Version`)."""
    v = release if isinstance(release, Version) else Version.parse(release, what="Kubernetes version")
    return v >= since(fact)


_PATCH = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$")


def holds_at(fact: str, release: str | Version) -> bool:
    """:func:`holds`, exact to the patch where ``release`` names one (``v1.37.0``, a live cluster's gitVersion):
    a fact that landed in a later patch of its first minor (``notInPatches`` in data/versions.yaml) does not
    hold at the patches listed there. A bare minor means its newest patch."""
    if not holds(fact, release):
        return False
    m = _PATCH.match(str(release).strip()) if isinstance(release, str) else None
    if m is None:
        return True
    patches = _data().get("notInPatches", {}).get(fact, [])
    return f"{m.group(1)}.{m.group(2)}.{m.group(3)}" not in patches


def api(name: str, release: str | Version) -> Any:
    """What the table ``name`` of ``apis`` in data/versions.yaml says for ``release``: the entry of the newest
    release at or before it, or None when ``release`` is older than the table."""
    return _by_release("apis", name, release)


def behaviour(name: str, release: str | Version) -> Any:
    """What the table ``name`` of ``byRelease`` in data/versions.yaml (behaviour that is not a plain
    since-fact) says for ``release``, read like :func:`api`."""
    return _by_release("byRelease", name, release)


def _by_release(section: str, name: str, release: str | Version) -> Any:
    v = release if isinstance(release, Version) else _release(release)
    return _entry_at(section, name, v)


@functools.cache
def _release(text: str) -> Version:
    return Version.parse(text, what="Kubernetes version")


@functools.cache
def _entry_at(section: str, name: str, v: Version) -> Any:
    """The table's entry for ``v``, once per release: the allocator asks at every allocation (the value is the
    data's own object, as before, so callers see the same object each time)."""
    try:
        table: dict[str, Any] = _data()[section][name]
    except KeyError:
        raise KeyError(f"{name!r} is not a table of data/versions.yaml ({section})") from None
    known = [(Version.parse(r), value) for r, value in table.items() if Version.parse(r) <= v]
    return max(known, key=lambda kv: kv[0])[1] if known else None


def unverified(release: str | Version) -> str | None:
    """The pre-release tag a supported release is modelled from while it is not yet verified against a control
    plane of that release (``unverified`` in data/versions.yaml), else None."""
    tags: dict[str, str] = _data().get("unverified") or {}
    return tags.get(str(release if isinstance(release, Version) else Version.parse(release)))


def unverified_warning(release: str | Version) -> str | None:
    """The one stderr line every answer at an unverified release carries, else None: a release modelled from a
    pre-release tag, or a supported release the testbed does not build (its answers were never compared with
    its own control plane and allocator: docs/testbed.md says why)."""
    tag = unverified(release)
    if tag is None:
        if str(release) in _data()["testbed"]:
            return None
        return (
            f"Kubernetes {release} is modelled from its sources but not verified against a {release} control plane "
            f"and allocator: kubedra's tests do not run one yet (docs/testbed.md in kubedra's repository says why)"
        )
    if str(release) in _data()["testbed"]:  # the testbed builds the pre-release's control plane and allocator
        return (
            f"Kubernetes {release} is modelled from and tested against its pre-release {tag}, not yet against "
            f"the {release}.0 release; recheck the answer when {release}.0 is out"
        )
    return (
        f"Kubernetes {release} is modelled from its pre-release {tag} and not yet verified against a "
        f"{release} control plane; recheck the answer when {release}.0 is out"
    )


def allocator_features(release: str | Version) -> dict[str, bool] | None:
    """structured.Features of kube-scheduler at ``release`` with its default gates (``allocatorFeatures`` in
    data/versions.yaml), or None when the release has no entry."""
    table: dict[str, dict[str, bool]] = _data().get("allocatorFeatures") or {}
    info = table.get(str(release if isinstance(release, Version) else Version.parse(release)))
    return None if info is None else {name: bool(on) for name, on in info.items()}


def testbed() -> dict[str, dict[str, Any]]:
    """The releases the Go testbed builds (newest first), each with what differs: ``allocatorFeatures``
    (``testbed`` and ``allocatorFeatures`` in data/versions.yaml)."""
    releases: list[str] = _data()["testbed"]
    out: dict[str, dict[str, Any]] = {}
    for v in releases:
        release = str(Version.parse(v))
        out[release] = {"allocatorFeatures": allocator_features(release) or {}}
    return out
