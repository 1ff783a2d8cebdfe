"""Semantic versions exactly as Kubernetes reads them (github.com/blang/semver/v4 + apiserver's semver library).

``Semver.parse(text)`` is the strict parser the apiserver uses for ``version`` device attributes and for CEL
``semver(s)`` / ``isSemver(s)``: ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]``, no ``v`` prefix, no leading zeros in
numbers or numeric prerelease identifiers, no whitespace, every number an unsigned 64-bit integer.

``Semver.parse(text, normalize=True)`` is CEL's ``semver(s, true)``: strip one leading ``v``, drop leading zeros of
the first three dot-separated parts, pad a missing minor/patch with ``0`` (a shortened version may not carry
prerelease/build data), then parse strictly. Unlike blang's ``ParseTolerant`` it does *not* trim whitespace.

Ordering follows semver 2.0.0 precedence (build metadata ignored): ``1.0.0-alpha < 1.0.0-alpha.1 <
1.0.0-alpha.beta < 1.0.0-beta < 1.0.0-beta.2 < 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0``; numeric identifiers sort
below alphanumeric ones and alphanumeric ones compare bytewise. Equality is ``compare == 0`` (build ignored).

Error messages are the upstream library's, e.g. ``No Major.Minor.Patch elements found``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_MAX_UINT64 = (1 << 64) - 1


class SemverError(ValueError):
    """The text is not a valid semantic version; the message is upstream's."""


def _go_quote(s: str) -> str:
    """Go's %q for the ASCII-ish strings these messages carry."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _only(s: str, allowed: frozenset[str]) -> bool:
    return all(ch in allowed for ch in s)


def _leading_zero(s: str) -> bool:
    return len(s) > 1 and s[0] == "0"


def _parse_uint(s: str) -> int:
    """strconv.ParseUint(s, 10, 64) for strings already known to hold only digits (or be empty)."""
    if not s:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(s)
    if value > _MAX_UINT64:
        raise SemverError(f"strconv.ParseUint: parsing {_go_quote(s)}: value out of range")
    return value


@dataclass(frozen=True, slots=True)
class PreRelease:
    """One dot-separated prerelease identifier."""

    text: str
    number: int | None = None  # set when the identifier is numeric

    def cmp(self, other: PreRelease) -> int:
        if self.number is not None and other.number is None:
            return -1
        if self.number is None and other.number is not None:
            return 1
        if self.number is not None and other.number is not None:
            return (self.number > other.number) - (self.number < other.number)
        a, b = self.text.encode(), other.text.encode()
        return (a > b) - (a < b)

    def __str__(self) -> str:
        return str(self.number) if self.number is not None else self.text


def _parse_pre(s: str) -> PreRelease:
    if not s:
        raise SemverError("Prerelease is empty")
    if _only(s, _NUMBERS):
        if _leading_zero(s):
            raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(s)}")
        return PreRelease(s, _parse_uint(s))
    if _only(s, _ALPHANUM):
        return PreRelease(s)
    raise SemverError(f"Invalid character(s) found in prerelease {_go_quote(s)}")


@dataclass(frozen=True, slots=True)
class Semver:
    """A parsed semantic version. Compare with :meth:`compare` or the rich comparison operators."""

    major: int
    minor: int
    patch: int
    pre: tuple[PreRelease, ...] = ()
    build: tuple[str, ...] = field(default=(), compare=False)

    # ------------------------------------------------------------------ parsing
    @staticmethod
    def parse(text: str, normalize: bool = False) -> Semver:
        """Strict ``semver.Parse``; with ``normalize`` the apiserver's ``normalizeAndParse``."""
        if not isinstance(text, str):
            raise SemverError("Version string empty")
        return _parse_normalized(text) if normalize else _parse_strict(text)

    @staticmethod
    def is_valid(text: str, normalize: bool = False) -> bool:
        try:
            Semver.parse(text, normalize)
        except SemverError:
            return False
        return True

    # ------------------------------------------------------------------ ordering
    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 like ``Version.Compare``; build metadata has no precedence."""
        for a, b in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a_id, b_id in zip(self.pre, other.pre, strict=False):
            c = a_id.cmp(b_id)
            if c:
                return c
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __lt__(self, other: Semver) -> bool:
        return self.compare(other) < 0

    def __le__(self, other: Semver) -> bool:
        return self.compare(other) <= 0

    def __gt__(self, other: Semver) -> bool:
        return self.compare(other) > 0

    def __ge__(self, other: Semver) -> bool:
        return self.compare(other) >= 0

    # ------------------------------------------------------------------ printing
    @property
    def prerelease(self) -> str:
        return ".".join(str(p) for p in self.pre)

    def __str__(self) -> str:
        out = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            out += "-" + self.prerelease
        if self.build:
            out += "+" + ".".join(self.build)
        return out

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


@functools.lru_cache(maxsize=8192)
def _parse_strict(s: str) -> Semver:
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    nums: list[int] = []
    for label, part in (("Major", parts[0]), ("Minor", parts[1])):
        if not _only(part, _NUMBERS):
            raise SemverError(f"Invalid character(s) found in {label.lower()} number {_go_quote(part)}")
        if _leading_zero(part):
            raise SemverError(f"{label} number must not contain leading zeroes {_go_quote(part)}")
        nums.append(_parse_uint(part))
    rest = parts[2]
    build: list[str] = []
    prerelease: list[str] = []
    plus = rest.find("+")
    if plus != -1:
        build = rest[plus + 1 :].split(".")
        rest = rest[:plus]
    dash = rest.find("-")
    if dash != -1:
        prerelease = rest[dash + 1 :].split(".")
        rest = rest[:dash]
    if not _only(rest, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in patch number {_go_quote(rest)}")
    if _leading_zero(rest):
        raise SemverError(f"Patch number must not contain leading zeroes {_go_quote(rest)}")
    patch = _parse_uint(rest)
    pre = tuple(_parse_pre(p) for p in prerelease)
    for b in build:
        if not b:
            raise SemverError("Build meta data is empty")
        if not _only(b, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {_go_quote(b)}")
    return Semver(nums[0], nums[1], patch, pre, tuple(build))


def _parse_normalized(s: str) -> Semver:
    if s.startswith("v"):
        s = s[1:]
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in _NUMBERS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(ch in "+-" for ch in parts[-1]):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts.extend(["0"] * (3 - len(parts)))
    return _parse_strict(".".join(parts))


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """Module-level alias of :meth:`Semver.parse`."""
    return Semver.parse(text, normalize)
