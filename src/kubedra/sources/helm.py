"""Helm inputs: render a chart with the ``helm`` binary, and decode Helm 3 release secrets from a cluster.

Rendering (``helm template``) is the only faithful way to see what a chart produces; scraping raw templates
misses conditionals and breaks on template syntax. The binary is looked up as ``$KUBEDRA_HELM``, then ``helm``
on PATH, then the one the testbed builds. Documents keep the template they came from (the ``# Source:``
comment Helm writes) as their file, with lines counted inside that template's rendered output.

A Helm 3 release is a Secret of type ``helm.sh/release.v1``; its ``data.release`` is base64 (the Secret
encoding) of base64 of gzip of the release JSON, whose ``manifest`` holds the rendered objects.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import os
import re
import shutil
import subprocess
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubedra.errors import InputError, Location
from kubedra.sources import binaries, files

RELEASE_SECRET_TYPE = "helm.sh/release.v1"
_SOURCE = re.compile(r"^# Source: (?P<path>\S.*?)\s*$", re.M)


def find_helm() -> str | None:
    env = os.environ.get("KUBEDRA_HELM")
    if env:
        return env if Path(env).is_file() else None
    found = shutil.which("helm")
    if found:
        return found
    path = binaries.find_any("helm")
    return str(path) if path else None


@dataclass
class Rendered:
    documents: list[files.Document] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    error: str | None = None  # the chart could not be rendered at all
    files: int = 0


def _display_path(chart: str, source: str) -> str:
    """``mychart/templates/x.yaml`` (Helm's name) -> ``<chart dir>/templates/x.yaml``."""
    parts = source.split("/", 1)
    return os.path.join(chart, parts[1]) if len(parts) == 2 else os.path.join(chart, source)


def split_rendered(text: str, chart: str) -> Rendered:
    """Parse ``helm template`` output, attributing each document to its template."""
    out = Rendered()
    marks = list(_SOURCE.finditer(text))
    if not marks:
        one = files.parse_text(text, os.path.join(chart, "(rendered)"))
        out.documents, out.errors, out.files = one.documents, one.errors, 1
        return out
    seen: set[str] = set()
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        chunk = text[m.start() : end]
        # keep the chunk's own line numbers: the '# Source' line is line 1 of that template's output
        name = _display_path(chart, m.group("path"))
        seen.add(name)
        one = files.parse_text(chunk.rstrip().removesuffix("---"), name)
        out.documents.extend(one.documents)
        out.errors.extend(one.errors)
    out.files = len(seen)
    return out


def render_chart(
    chart: str,
    values: Sequence[str] = (),
    *,
    release: str = "kubedra-audit",
    kube_version: str | None = None,
    timeout: float = 120.0,
) -> Rendered:
    if not Path(chart).exists():
        raise InputError("no such chart directory", Location(file=chart))
    helm = find_helm()
    if helm is None:
        return Rendered(error="helm is not installed (install Helm 3 or set KUBEDRA_HELM to its path)")
    argv = [helm, "template", release, chart]
    for v in values:
        if not Path(v).exists():
            raise InputError("no such values file", Location(file=v))
        argv += ["--values", v]
    if kube_version:
        argv += ["--kube-version", kube_version]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Rendered(error=f"helm template failed: {e}")
    if proc.returncode != 0:
        msg = " ".join(proc.stderr.strip().splitlines()[-3:]) or f"exit code {proc.returncode}"
        return Rendered(error=f"helm template failed: {msg}")
    return split_rendered(proc.stdout, chart)


@dataclass(frozen=True)
class Release:
    name: str
    namespace: str
    revision: int
    status: str
    chart: str
    manifest: str

    def describe(self) -> str:
        return f"Helm release {self.namespace}/{self.name} revision {self.revision}, chart {self.chart}"


def decode_release_data(data: str | bytes) -> dict[str, Any]:
    """The release JSON from a Secret's ``data.release`` value (still base64 as in the Secret object)."""
    try:
        once = base64.b64decode(data, validate=False)
        payload = base64.b64decode(once, validate=False)
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"not base64: {e}") from e
    if payload[:2] == b"\x1f\x8b":
        payload = _gunzip(payload, MAX_RELEASE_BYTES)
    try:
        release: Any = json.loads(payload)
    except RecursionError as e:
        raise ValueError("release JSON nests too deeply") from e
    if not isinstance(release, dict):
        raise ValueError("release is not a JSON object")
    return release


# A release Secret holds at most 1 MiB (etcd's object limit); its gzip'd JSON rarely expands beyond 10x.
# Decompression stops at 64 MiB: a gzip bomb is one unreadable release, not a MemoryError.
MAX_RELEASE_BYTES = 64 * 1024 * 1024


def _gunzip(data: bytes, limit: int) -> bytes:
    """gzip-decompress at most ``limit`` bytes; ValueError beyond (a bomb) or on a corrupt stream."""
    d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as e:
        raise ValueError(f"not gzip: {e}") from e
    if len(out) > limit or d.unconsumed_tail:
        raise ValueError(f"release decompresses to more than {limit // (1024 * 1024)} MiB: not read")
    return out


def decode_release_secret(secret: dict[str, Any]) -> Release:
    data = secret.get("data") or {}
    raw = data.get("release") if isinstance(data, dict) else None
    if not raw:
        raise ValueError("secret has no data.release")
    rel = decode_release_data(raw)
    try:
        return _release(secret, rel)
    except (TypeError, AttributeError) as e:  # fields of the wrong JSON type
        raise ValueError(f"malformed release: {e}") from e


def _release(secret: dict[str, Any], rel: dict[str, Any]) -> Release:
    meta = secret.get("metadata") or {}
    chart_meta = (
        ((rel.get("chart") or {}).get("metadata") or {}) if isinstance(rel.get("chart"), dict) else {}
    )
    return Release(
        name=str(rel.get("name") or (meta.get("labels") or {}).get("name") or ""),
        namespace=str(rel.get("namespace") or meta.get("namespace") or ""),
        revision=int(rel.get("version") or (meta.get("labels") or {}).get("version") or 0),
        status=str((rel.get("info") or {}).get("status") or (meta.get("labels") or {}).get("status") or ""),
        chart=f"{chart_meta.get('name', '?')}-{chart_meta.get('version', '?')}",
        manifest=str(rel.get("manifest") or ""),
    )


def current_releases(releases: Sequence[Release]) -> list[Release]:
    """One release per (namespace, name): the newest deployed revision, else the newest revision."""
    best: dict[tuple[str, str], Release] = {}
    for r in releases:
        key = (r.namespace, r.name)
        cur = best.get(key)
        if cur is None:
            best[key] = r
            continue
        r_dep, c_dep = r.status == "deployed", cur.status == "deployed"
        if (r_dep, r.revision) > (c_dep, cur.revision):
            best[key] = r
    return [best[k] for k in sorted(best)]


def encode_release(release: dict[str, Any]) -> str:
    """Inverse of :func:`decode_release_data` (what a Secret's data.release holds); used by tests and fixtures."""
    inner = base64.b64encode(gzip.compress(json.dumps(release).encode())).decode()
    return base64.b64encode(inner.encode()).decode()
