"""--bound: the optimal-packing relaxation and its absence.

ortools is an optional extra for users (``kubedra[bound]``) and part of the ``dev`` extra, so these tests run
the solver wherever the test suite runs; none skips. Its absence is simulated by hiding the module.
"""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from kubedra.cli import cli, main
from kubedra.simulate.bound import bounds, pod_shape, problem

from .helpers import deployment, run


def test_missing_ortools_is_one_line_exit_2(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ortools", None)  # find_spec and import both see it as absent
    with pytest.raises(SystemExit) as e:
        main(["demo", "--bound"])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2
    assert "pip install 'kubedra[bound]'" in err
    assert len(err.splitlines()) == 1


def test_shapes_of_converted_pods():
    sim = run(
        deployment("a", 2, memory="18Gi") + deployment("b", 1, resources="nvidia.com/mig-3g.40gb: 1"),
        nodes="1x1xH100-80GB",
        gpu_mode="mig-dynamic",
        sizing="mig",
        modes=("dra",),
    )
    p = problem(sim, "dra", sim.results["dra"])
    shapes = {tuple((o.kind, o.name) for o in s.options): s.pods for s in p.shapes}
    assert shapes[(("mig", "3g.40gb"),)] == 1
    (first,) = [k for k in shapes if len(k) > 1]
    assert first[0] == ("mig", "1g.20gb")
    assert first[-1] == ("full", "")
    (gpu,) = p.gpus["h100-80gb-0"]
    assert gpu.full
    assert gpu.profiles["3g.40gb"][:2] == (3, 4)
    assert pod_shape(sim.results["dra"].sim_pods[2], "device-plugin") == ()


def test_bound_sees_what_spreading_strands():
    text = deployment("three", 2, resources="nvidia.com/mig-3g.40gb: 1") + deployment(
        "seven", 1, resources="nvidia.com/mig-7g.80gb: 1"
    )
    sim = run(text, nodes="2x1xH100-80GB", gpu_mode="mig-dynamic", modes=("dra",))
    assert sim.results["dra"].placed == 2  # LeastAllocated spread the 3g pods over both GPUs
    (line,) = bounds(sim)
    assert "at most 3 of 3 pods fit (optimum" in line
    assert "the scheduler placed 2" in line


def test_bound_of_the_demo():
    sim = run(
        deployment("s", 6, memory="8Gi")
        + deployment("m", 8, memory="18Gi")
        + deployment("l", 4, memory="36Gi"),
        nodes="1x8xA100-80GB",
        gpu_mode="mig-dynamic",
        dp_gpu_mode="full",
        sizing="mig",
    )
    dp, dra = bounds(sim)
    assert "at most 8 of 18" in dp
    assert "at most 18 of 18" in dra


def test_demo_bound_at_the_cli():
    """`kubedra demo --bound` prints one bound line per mode beside the scheduler's result."""
    r = CliRunner().invoke(cli, ["demo", "--bound"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    lines = [ln.strip() for ln in r.output.splitlines() if ln.strip().startswith("- bound,")]
    assert len(lines) == 2, r.output
    assert "at most 8 of 18 pods fit (optimum of the relaxation" in lines[0]
    assert "at most 18 of 18 pods fit (optimum of the relaxation" in lines[1]
