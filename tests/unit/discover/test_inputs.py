"""``kubedra discover`` asks the vendors which GPU inputs there are (``Vendor.discover_inputs``) and hands the one
given to its vendor: the options users' command lines name stay, each routed to the vendor that reads it."""

from __future__ import annotations

import pytest

from kubedra import vendors
from kubedra.discover import drain, node
from kubedra.errors import UsageError
from kubedra.vendors.discovery import DiscoverInput, DiscoverRequest

from .helpers import run


def test_every_input_option_is_one_vendors_and_the_documented_ones_are_there() -> None:
    owners = {i.option: v.name for v, i in node.inputs()}
    assert owners == {"--nvidia-smi-xml": "nvidia", "--nvml": "nvidia", "--amd-smi-json": "amd"}
    assert len({i.dest for _, i in node.inputs()}) == len(owners)
    help_text = run("discover", "--help", code=0).stdout
    assert all(o in help_text for o in owners)


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--nvml", "--nvidia-smi-xml", "x.xml"),
        ("--nvidia-smi-xml", "x.xml", "--amd-smi-json", "x.json"),
        ("--nvml", "--amd-smi-json", "x.json"),
    ],
)
def test_exactly_one_input_names_every_vendors(args: tuple[str, ...]) -> None:
    res = run("discover", *args, code=2)
    assert res.stdout == ""
    assert "give exactly one of --nvidia-smi-xml FILE, --nvml or --amd-smi-json FILE" in res.stderr


def test_the_input_goes_to_its_vendor(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, DiscoverInput, str | None]] = []
    for v in vendors.all():
        monkeypatch.setattr(
            type(v),
            "discover_node",
            lambda self, given, value, request: seen.append((self.name, given, value)),
        )
    request = DiscoverRequest(node="n", k8s_version="1.37")
    node.discover("amd_smi_json", "f.json", request)
    node.discover("nvml", None, request)
    assert [(name, i.option, value) for name, i, value in seen] == [
        ("amd", "--amd-smi-json", "f.json"),
        ("nvidia", "--nvml", None),
    ]


@pytest.mark.parametrize("tainting", [0, 2])
def test_a_drain_rule_needs_exactly_one_vendor_whose_driver_taints(
    monkeypatch: pytest.MonkeyPatch, tainting: int
) -> None:
    nvidia = vendors.get("nvidia")
    monkeypatch.setattr(vendors, "all", lambda: (nvidia,) * tainting)
    with pytest.raises(UsageError, match=f"{tainting} vendors' drivers taint unhealthy devices"):
        drain.drain_rule("n", "gpu-0", "1.37")
