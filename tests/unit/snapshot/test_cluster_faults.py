"""Faults only a fake API server can produce (kubedra.testing.faultapi): stalls, bodies that drip in or never
end, gzip bombs, lists whose ``continue`` never ends. Each is bounded in time and memory, recorded as a read
that did not happen (the result is incomplete: exit 2) or, when the cluster cannot be read at all, one line
on stderr and exit 2. Forbidden/unauthorised reads are tested on the real apiserver (tests/integration)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubedra.sources import cluster
from kubedra.testing.faultapi import FaultAPI

from .helpers import run


@pytest.fixture
def api() -> Iterator[FaultAPI]:
    with FaultAPI(stall_seconds=30) as server:
        yield server


def _snapshot(api: FaultAPI, tmp: Path, *args: str) -> tuple[int, str, dict, float]:
    kc = api.kubeconfig(tmp / "kc")
    out = tmp / "snap.yaml"
    started = time.monotonic()
    res = run("snapshot", "--kubeconfig", str(kc), "-o", str(out), "--no-helm-releases", *args)
    took = time.monotonic() - started
    header = yaml.safe_load(out.read_text())["kubedra"] if out.exists() else {}
    return res.exit_code, res.stderr, header, took


def _reasons(header: dict) -> dict[str, str]:
    return {r["resource"]: r["reason"] for r in header.get("notInspected") or []}


def test_a_healthy_fake_is_complete(api: FaultAPI, tmp_path: Path) -> None:
    code, err, header, _ = _snapshot(api, tmp_path, "--allow-missing", "metrics")
    assert code == 0, err
    assert set(_reasons(header)) == {cluster.METRICS}  # the fake serves no /metrics: 404, named


def test_stalled_list_is_bounded_by_the_request_timeout(api: FaultAPI, tmp_path: Path) -> None:
    api.fault("/api/v1/pods", "stall")
    code, err, header, took = _snapshot(api, tmp_path, "--request-timeout", "1", "--allow-missing", "metrics")
    assert code == 2, (took, err)
    assert took < 10, (took, err)
    assert "timed out" in _reasons(header)["pods"].lower()
    assert "kubedra: incomplete: cluster fault: cannot list pods (cluster-wide): failed" in err
    assert ("GET", "/api/v1/nodes") in api.requests  # the other lists were still read


def test_stalled_server_is_one_line_exit_2(api: FaultAPI, tmp_path: Path) -> None:
    api.fault("*", "stall")
    code, err, header, took = _snapshot(api, tmp_path, "--request-timeout", "1")
    assert code == 2, (took, err)
    assert took < 10, (took, err)
    assert not header, (took, err)
    assert err.count("\n") == 1
    assert err.startswith("kubedra: error: cannot reach cluster fault at http://")


def test_slow_drip_body_is_bounded_by_the_request_timeout(api: FaultAPI, tmp_path: Path) -> None:
    api.fault("/api/v1/pods", "drip")
    code, err, header, took = _snapshot(api, tmp_path, "--request-timeout", "2", "--allow-missing", "metrics")
    assert code == 2, (took, err)
    assert took < 12, (took, err)
    assert "not complete within the request timeout" in _reasons(header)["pods"]


def test_deadline_bounds_the_whole_command(api: FaultAPI, tmp_path: Path) -> None:
    api.fault("/api/v1/pods", "stall").fault("/api/v1/nodes", "stall").fault("/api/v1/events", "stall")
    code, err, _, took = _snapshot(api, tmp_path, "--request-timeout", "20", "--deadline", "2")
    assert code == 2, (took, err)
    assert took < 10, (took, err)
    assert err.count("\n") == 1
    assert "deadline" in err


@pytest.mark.parametrize("fault", ["endless-continue", "repeated-continue"])
def test_pagination_that_never_ends_stops(
    api: FaultAPI, tmp_path: Path, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "MAX_PAGES", 50)
    api.fault("/api/v1/nodes", fault)
    code, err, header, took = _snapshot(api, tmp_path, "--allow-missing", "metrics")
    assert code == 2, err
    assert took < 30, err
    assert _reasons(header)["nodes"].startswith("pagination stopped")
    assert len([r for r in api.requests if r[1] == "/api/v1/nodes"]) <= 50


@pytest.mark.parametrize("fault", ["huge", "gzip-bomb"])
def test_bodies_over_the_cap_stop(
    api: FaultAPI, tmp_path: Path, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "MAX_BODY", 4 << 20)
    api.bomb_bytes = 32 << 20
    api.fault("/api/v1/pods", fault)
    code, err, header, took = _snapshot(api, tmp_path, "--allow-missing", "metrics")
    assert code == 2, err
    assert took < 30, err
    assert _reasons(header)["pods"] == "response body over 4 MiB"
