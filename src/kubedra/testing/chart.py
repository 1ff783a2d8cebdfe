"""The Helm chart of the repository (deploy/chart/kubedra), linted and rendered with the testbed's helm.

Only in a source checkout: the chart is not part of the wheel.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from kubedra.testing import binaries

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "deploy" / "chart" / "kubedra"


def helm() -> Path:
    """The testbed's helm (:class:`binaries.TestbedMissing` when it is not built)."""
    return binaries.require("helm")


def lint(*args: str) -> subprocess.CompletedProcess[str]:
    """``helm lint --strict CHART ARGS`` (not checked: the caller reads returncode and output)."""
    return subprocess.run(
        [str(helm()), "lint", "--strict", str(CHART), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def render(
    values: Mapping[str, Any] | None = None, release: str = "kubedra", namespace: str = "kubedra"
) -> list[dict[str, Any]]:
    """``helm template RELEASE CHART -n NAMESPACE --set-json K=V...`` as a list of objects."""
    argv = [str(helm()), "template", release, str(CHART), "--namespace", namespace]
    for key, value in (values or {}).items():
        argv += ["--set-json", f"{key}={json.dumps(value)}"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def runs(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kubedra commands the rendered CronJob runs ($KUBEDRA_RUNS of its container)."""
    cron = next(o for o in objects if o["kind"] == "CronJob")
    container = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    result: list[dict[str, Any]] = json.loads(env["KUBEDRA_RUNS"])
    return result
