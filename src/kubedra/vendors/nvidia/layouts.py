"""Static MIG layouts: parse a mig-parted-like layout and place its GPU instances like NVML does.

Geometry (NVIDIA MIG user guide, ``nvidia-smi mig -lgipp``): a GPU instance occupies ``size``
consecutive memory slices of an 8-slot axis, starting at one of its profile's valid starts; two
instances coexist iff their memory ranges are disjoint. Each profile also has a maximum count.

Placement, as the tools do it (facts from NVIDIA/mig-parted ``pkg/mig/config``):
- mig-parted creates instances largest first (``MigConfig.Flatten``: G descending, then C, then
  attributes), and retries every distinct creation order until one succeeds;
- NVML's ``CreateGpuInstance`` without an explicit placement takes the *highest* free valid start
  (INFERRED from the user guide's ``-cgi 19,14,5`` example: 1g at 6, 2g at 4, 4g at 0).
``3g.40gb@4`` pins an instance to a start (``nvidia-smi mig -cgi 9:4``).

Layout text (``GpuMode`` ``mig-static:<layout>``):
- named, as in mig-parted's default config: ``all-disabled``, ``all-enabled`` (MIG on, no
  instances), ``all-balanced``, ``all-<profile>`` (that profile, as many as fit: its max count;
  ``all-1g.10gb.me`` means ``1g.10gb+me``);
- explicit: ``1g.10gb*7``, ``3g.40gb,2g.20gb,1g.10gb``, ``3g.40gb@4,4g.40gb@0``;
- per GPU: layouts joined by ``/`` split the node's GPUs into equal consecutive blocks
  (``all-balanced/all-disabled`` on 8 GPUs: GPUs 0-3 balanced, 4-7 without MIG).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kubedra.errors import InputError
from kubedra.vendors.nvidia.models import MEMORY_SLICES, GpuModel, MigProfile

_ITEM_RE = re.compile(r"^(?P<p>\d+g\.\d+gb(?:[+.-][a-z][a-z.+]*)?)(?:\*(?P<n>\d+)|@(?P<s>\d+))?$")
_NAMED = ("all-disabled", "all-enabled", "all-balanced")


@dataclass(frozen=True)
class MigPlacement:
    """One GPU instance: a profile at a start on the memory-slice axis."""

    profile: MigProfile
    start: int

    @property
    def slots(self) -> range:
        return self.profile.slots(self.start)

    def __str__(self) -> str:
        return f"{self.profile.name}@{self.start}"


# None: MIG disabled on that GPU (full GPU); a tuple (possibly empty): MIG enabled with these instances.
GpuLayout = tuple[MigPlacement, ...] | None


@dataclass(frozen=True)
class LayoutItem:
    profile: str
    count: int = 1
    start: int | None = None


@dataclass(frozen=True)
class LayoutSpec:
    """One GPU's layout as written, before it meets a GPU model."""

    text: str
    named: str | None = None  # "all-balanced", "all-1g.10gb", ...
    items: tuple[LayoutItem, ...] = ()


def parse_layout(text: str) -> tuple[LayoutSpec, ...]:
    """Parse layout text into one spec per GPU block; syntax errors raise InputError."""
    if not text or not text.strip():
        raise InputError("empty MIG layout (e.g. all-balanced, all-1g.10gb, 3g.40gb*2)")
    return tuple(_parse_one(part.strip(), text) for part in text.split("/"))


def _parse_one(text: str, whole: str) -> LayoutSpec:
    if not text:
        raise InputError(f"empty MIG layout between '/' in {whole!r}")
    if text.startswith("all-"):
        rest = text[4:]
        if text in _NAMED or _ITEM_RE.match(rest):
            if text not in _NAMED and ("*" in rest or "@" in rest):
                raise InputError(f"invalid named MIG layout {text!r}")
            return LayoutSpec(text=text, named=text)
        raise InputError(
            f"unknown named MIG layout {text!r} (all-disabled, all-enabled, all-balanced, all-<profile>)"
        )
    items = []
    for raw in text.split(","):
        raw = raw.strip()
        m = _ITEM_RE.match(raw)
        if not m:
            raise InputError(
                f"invalid MIG layout item {raw!r} in {whole!r} (expected <profile>, <profile>*<n> or <profile>@<start>,"
                " e.g. 1g.10gb*7 or 3g.40gb@4)"
            )
        count = int(m.group("n")) if m.group("n") else 1
        if count < 1:
            raise InputError(f"invalid MIG instance count in {raw!r}: must be at least 1")
        start = int(m.group("s")) if m.group("s") is not None else None
        items.append(LayoutItem(profile=m.group("p"), count=count, start=start))
    return LayoutSpec(text=text, items=tuple(items))


def resolve_layout(spec: LayoutSpec, model: GpuModel) -> GpuLayout:
    """Place one GPU's layout on ``model``: None for MIG disabled, else the placed instances."""
    if spec.named == "all-disabled":
        return None
    if not model.mig_capable:
        raise InputError(f"MIG layout {spec.text!r}: {model.key} ({model.product_name}) does not support MIG")
    if spec.named == "all-enabled":
        return ()
    wants: list[tuple[MigProfile, int | None]] = []
    if spec.named == "all-balanced":
        for name, n in model.balanced:
            wants += [(model.profile(name), None)] * n
    elif spec.named is not None:
        profile = model.profile(spec.named[4:])
        wants = [(profile, None)] * profile.max_count
    else:
        for item in spec.items:
            profile = model.profile(item.profile)
            wants += [(profile, item.start)] * item.count
    return place(model, wants, label=spec.text)


def layouts_for_gpus(specs: Sequence[LayoutSpec], model: GpuModel, gpus: int) -> list[GpuLayout]:
    """One layout per GPU: ``k`` specs split ``gpus`` into ``k`` equal consecutive blocks."""
    k = len(specs)
    if gpus % k:
        raise InputError(f"{k} per-GPU MIG layouts do not divide {gpus} GPUs into equal blocks")
    resolved = [resolve_layout(s, model) for s in specs]
    block = gpus // k
    return [resolved[i // block] for i in range(gpus)]


def creation_order_key(profile: MigProfile) -> tuple[int, int, str, int]:
    """mig-parted's creation order: G, C (== G here), attributes descending; ties by memory."""
    return (
        -profile.compute_slices,
        -profile.compute_slices,
        _neg("+".join(profile.attributes)),
        -profile.size,
    )


def _neg(s: str) -> str:
    # descending string order inside an ascending sort key
    return "".join(chr(0x10FFFF - ord(c)) for c in s) + "\U0010ffff"


def place(
    model: GpuModel, wants: Sequence[tuple[MigProfile, int | None]], *, label: str = "layout"
) -> tuple[MigPlacement, ...]:
    """Place instances (profile, fixed start or None) on one GPU; InputError if they cannot coexist."""
    where = f"MIG layout {label!r} on {model.key}"
    counts: dict[str, int] = {}
    for profile, _ in wants:
        counts[profile.name] = counts.get(profile.name, 0) + 1
    for profile in model.mig_profiles:
        if counts.get(profile.name, 0) > profile.max_count:
            raise InputError(
                f"{where}: {counts[profile.name]} x {profile.name} exceeds its maximum of {profile.max_count} per GPU"
            )
    slices = sum(p.size for p, _ in wants)
    if slices > MEMORY_SLICES:
        raise InputError(f"{where}: needs {slices} memory slices, a GPU has {MEMORY_SLICES}")

    used: set[int] = set()
    fixed: list[MigPlacement] = []
    for profile, start in wants:
        if start is None:
            continue
        if start not in profile.starts:
            valid = ", ".join(str(s) for s in profile.starts)
            raise InputError(
                f"{where}: {profile.name} cannot start at memory slice {start} (valid starts: {valid})"
            )
        mp = MigPlacement(profile, start)
        clash = used.intersection(mp.slots)
        if clash:
            raise InputError(f"{where}: {mp} overlaps another instance on memory slice {min(clash)}")
        used.update(mp.slots)
        fixed.append(mp)

    auto = sorted((p for p, s in wants if s is None), key=creation_order_key)
    for order in _distinct_orders(auto):
        placed = _nvml_greedy(order, used)
        if placed is not None:
            return tuple(sorted(fixed + placed, key=lambda mp: (mp.start, mp.profile.size)))
    names = " + ".join(p.name for p, _ in wants)
    raise InputError(f"{where}: {names} cannot be placed without overlapping memory slices")


def _nvml_greedy(order: Sequence[MigProfile], used: set[int]) -> list[MigPlacement] | None:
    taken = set(used)
    out = []
    for profile in order:
        for start in sorted(profile.starts, reverse=True):
            if taken.isdisjoint(profile.slots(start)):
                taken.update(profile.slots(start))
                out.append(MigPlacement(profile, start))
                break
        else:
            return None
    return out


def _distinct_orders(items: list[MigProfile]) -> Iterator[list[MigProfile]]:
    """Creation orders in mig-parted's iteratePermutationsUntilSuccess order (distinct swaps only)."""
    items = list(items)

    def rec(i: int) -> Iterator[list[MigProfile]]:
        if i >= len(items):
            yield list(items)
            return
        for j in range(i, len(items)):
            if all(items[k].name != items[j].name for k in range(i, j)):
                items[i], items[j] = items[j], items[i]
                yield from rec(i + 1)
                items[i], items[j] = items[j], items[i]

    yield from rec(0)


def overlaps(layout: Sequence[MigPlacement]) -> bool:
    """True if any two instances share a memory slice (never for a layout this module produced)."""
    seen: set[int] = set()
    for mp in layout:
        if seen.intersection(mp.slots):
            return True
        seen.update(mp.slots)
    return False
