"""Read the simulation's inputs: manifests like ``kubectl -f`` (files, folders, ``-``), plus the Helm/Go
templates found in folders, which are reported (never parsed) because their values are unknown."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kubedra.errors import Location, UsageError
from kubedra.gcpause import paused_gc
from kubedra.scheduler.workloads import Skipped
from kubedra.sources.files import (
    HELM_TEMPLATE,
    STDIN,
    TEMPLATE_SUFFIXES,
    Document,
    iter_manifest_files,
    parse_text,
    read_text,
    template_line,
)


@dataclass
class Inputs:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def _paths(paths: Iterable[str]) -> Iterator[str]:
    return iter_manifest_files(paths, also=TEMPLATE_SUFFIXES)


def _template_reason(text: str) -> str:
    lines = text.splitlines()
    gpu = next(
        (
            ln.strip()
            for ln in lines
            if "nvidia.com/" in ln and "{{" in ln and not ln.lstrip().startswith("#")
        ),
        None,
    )
    why = f"{HELM_TEMPLATE} and simulate its output (its values are unknown until rendered)"
    if gpu:
        why += f" (GPU request set by the template: {gpu})"
    return why


def load_inputs(paths: Iterable[str]) -> Inputs:
    """Every document under ``paths``; templates are reported in ``skipped``; bad YAML raises InputError."""
    paths = list(paths)
    if not paths:
        raise UsageError("no input: pass -f FILE (or -f - for stdin), or --nodes to generate a cluster")
    with paused_gc():  # many small acyclic documents (kubedra.gcpause)
        return _load(paths)


def _load(paths: list[str]) -> Inputs:
    out = Inputs()
    for name in _paths(paths):
        text = read_text(name)
        display = "<stdin>" if name == STDIN else name
        line = template_line(name, text)
        if line is not None:
            why = _template_reason(text)
            out.skipped.append(Skipped(Location(display, line), os.path.basename(display), why))
            continue
        one = parse_text(text, name, keep_nodes="lazy")
        if one.errors:
            raise one.errors[0]
        for d in one.documents:
            reason = _not_simulated(d)
            if reason is not None:
                out.skipped.append(Skipped(d.location, d.describe().strip() or "document", reason))
                continue
            d.index = len(out.documents)
            out.documents.append(d)
    return out


def _not_simulated(d: Document) -> str | None:
    """Documents that are not objects the simulation can use (reported, not fatal)."""
    from kubedra.model import convert

    if not d.api_version or not d.kind:
        return "not a Kubernetes object (no apiVersion/kind): a fragment or a tool's own configuration"
    if convert.is_classic(d.api_version):
        return (
            f"classic DRA ({d.api_version}) was removed in Kubernetes 1.32 and has no mechanical conversion "
            "to structured DRA; rewrite it (kubedra migrate reports what to do)"
        )
    return None
