"""The chart's CronJob runner (deploy/chart/kubedra/files/run.py): one compact JSON line per kubedra run on
stdout, kubedra's stderr passed through, the highest exit code; ConfigMap data bounded below 1 MiB.
kubedra itself is a stand-in script here (its exit code and output are what is under test); the real kubedra
and a real ConfigMap write are in tests/integration/test_chart_live.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from kubedra.testing import chart

RUNNER = chart.CHART / "files" / "run.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubedra_chart_runner", RUNNER)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stand_in(tmp: Path) -> dict[str, str]:
    """A `kubedra` on PATH: `kubedra audit ...` prints JSON and exits 1, `kubedra verify ...` prints
    non-JSON and exits 2; both write a line to stderr."""
    exe = tmp / "kubedra"
    exe.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        "print('kubedra: note ' + sys.argv[1], file=sys.stderr)\n"
        "if sys.argv[1] == 'audit':\n"
        "    print(json.dumps({'findings': [{'rule': 'r'}], 'args': sys.argv[2:]}, indent=2)); sys.exit(1)\n"
        "print('not json'); sys.exit(2)\n"
    )
    exe.chmod(0o755)
    return {**os.environ, "PATH": f"{tmp}{os.pathsep}{os.environ['PATH']}"}


def test_one_json_line_per_run_and_the_highest_exit_code(tmp_path: Path) -> None:
    runs = [
        {"name": "audit", "args": ["audit", "--cluster", "-o", "json"]},
        {"name": "verify", "args": ["verify"]},
    ]
    env = {**_stand_in(tmp_path), "KUBEDRA_RUNS": json.dumps(runs)}
    env.pop("KUBEDRA_RESULTS_CONFIGMAP", None)
    proc = subprocess.run(
        [sys.executable, str(RUNNER)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    audit, verify = (json.loads(line) for line in lines)
    assert audit == {
        "kubedra": "audit",
        "exitCode": 1,
        "result": {"findings": [{"rule": "r"}], "args": ["--cluster", "-o", "json"]},
    }
    assert verify["exitCode"] == 2
    assert verify["result"] == {"unparsedOutput": "not json\n"}
    assert proc.stderr.splitlines() == ["kubedra: note audit", "kubedra: note verify"]


def test_configmap_data_stays_under_the_limit() -> None:
    runner = _module()
    big = json.dumps({"findings": ["x" * 1000] * 1000})
    data = runner.configmap_data({"audit": (1, big), "verify": (0, "{}")}, "2026-01-01T00:00:00+00:00")
    assert json.loads(data["exitCodes"]) == {"audit": 1, "verify": 0}
    assert "omitted" in json.loads(data["audit.json"])
    assert data["verify.json"] == "{}"
    assert sum(len(v.encode()) for v in data.values()) < 1024 * 1024
    small = runner.configmap_data({"audit": (0, '{"a": 1}')}, "t")
    assert small == {"exitCodes": '{"audit": 0}', "time": "t", "audit.json": '{"a": 1}'}
