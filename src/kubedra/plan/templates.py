"""Command templates kept as data (``data/plan/common.yaml``, ``data/plan/distributions/<name>.yaml``).

Placeholders are ``{{name}}``; every other brace (JSON patches, YAML) is left alone. A placeholder without a
value is an internal error, so a runbook never ships with a hole in a command.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from kubedra import vendors
from kubedra.k8s import datafiles
from kubedra.vendors import Vendor

_VAR = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


@functools.cache
def _load(name: str) -> dict[str, Any]:
    text = datafiles.read_text(f"plan/{name}")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def common() -> dict[str, Any]:
    return _load("common.yaml")


def vendor() -> Vendor:
    """The vendor whose DRA driver and device plugin the steps are written for (``vendor`` in common.yaml)."""
    return vendors.get(str(common()["vendor"]))


def platform_rules() -> list[dict[str, Any]]:
    """Platform rules that decide how a rollout moves nodes (``data/plan/platform-rules.yaml``, with sources)."""
    return list(_load("platform-rules.yaml").get("rules") or [])


def platform_rule(labels: Mapping[str, str]) -> dict[str, Any] | None:
    """The platform rule a node with these labels falls under, if any."""
    for rule in platform_rules():
        key, _, value = str((rule.get("match") or {}).get("nodeLabel") or "").partition("=")
        if key and labels.get(key) == value:
            return rule
    return None


def distribution(name: str) -> dict[str, Any]:
    return _load(f"distributions/{name}.yaml")


def render(text: str, values: Mapping[str, Any]) -> str:
    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in values:
            raise KeyError(f"command template uses {{{{{key}}}}} but no value is known for it")
        return str(values[key])

    return _VAR.sub(sub, text)


def render_all(lines: Iterable[str], values: Mapping[str, Any]) -> list[str]:
    return [render(str(line), values) for line in lines]


def per_node(lines: Iterable[str], values: Mapping[str, Any], nodes: Iterable[str]) -> list[str]:
    """Lines that mention ``{{node}}`` are repeated for each node; others are rendered once."""
    out: list[str] = []
    nodes = list(nodes)
    for line in lines:
        if "{{node}}" in str(line).replace(" ", ""):
            out += [render(str(line), {**values, "node": n}) for n in nodes]
        else:
            out.append(render(str(line), values))
    return out
