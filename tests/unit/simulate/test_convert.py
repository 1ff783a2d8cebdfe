"""Device plugin <-> DRA versions of a pod."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.errors import InputError
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import (
    Container,
    DeviceClaim,
    DeviceConstraint,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ObjectMeta,
    Pod,
)
from kubedra.scheduler.convert import DraOptions, DraVersion, MigOffer, to_device_plugin, to_dra

GI = 2**30


def pod(
    resources: dict[str, int], annotations: dict[str, str] | None = None, init: dict[str, int] | None = None
):
    limits = {k: Quantity.from_int(v) for k, v in resources.items()}
    limits["cpu"] = Quantity.parse("2")
    p = Pod(
        meta=ObjectMeta(name="p", namespace="ns", annotations=annotations or {}),
        containers=[Container(name="main", limits=limits)],
    )
    if init:
        p.init_containers = [
            Container(name="init", limits={k: Quantity.from_int(v) for k, v in init.items()})
        ]
    return p


OFFERS = (
    MigOffer("1g.10gb", (9728 * 2**20, 9984 * 2**20), 1, 1),
    MigOffer("1g.20gb", (19968 * 2**20,), 2, 1),
    MigOffer("2g.20gb", (19968 * 2**20,), 2, 2),
    MigOffer("3g.40gb", (40192 * 2**20,), 4, 3),
    MigOffer("7g.80gb", (80896 * 2**20,), 8, 7),
)


def spec(v: DraVersion) -> DeviceClaim:
    """The claim a conversion made (None only when it failed)."""
    assert v.spec is not None, v.error
    return v.spec


def exactly(r: DeviceRequest) -> ExactDeviceRequest:
    assert r.exactly is not None, r
    return r.exactly


def test_whole_gpu_becomes_one_claim_and_leaves_cpu_alone():
    v = to_dra(pod({"nvidia.com/gpu": 2}), DraOptions())
    assert v.error is None
    assert v.claim_name == "gpu"
    (req,) = spec(v).requests
    assert req.name == "gpu"
    assert exactly(req).device_class_name == "gpu.nvidia.com"
    assert exactly(req).count == 2
    assert exactly(req).selectors == []
    assert "nvidia.com/gpu" not in v.pod.containers[0].limits
    assert "cpu" in v.pod.containers[0].limits
    assert v.pod.resource_claims[-1].name == "gpu"


def test_mig_resource_becomes_mig_class_with_profile_selector():
    v = to_dra(pod({"nvidia.com/mig-3g.40gb": 1}), DraOptions())
    ex = exactly(spec(v).requests[0])
    assert ex.device_class_name == "mig.nvidia.com"
    assert ex.selectors == ["device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"]


def test_declared_memory_is_a_selector_on_whole_gpus():
    v = to_dra(pod({"nvidia.com/gpu": 1}, {"kubedra.io/gpu-memory": "20Gi"}), DraOptions())
    assert v.need_bytes == 20 * GI
    assert exactly(spec(v).requests[0]).selectors == [
        f"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{20 * GI}')) >= 0"
    ]


def test_mig_sizing_lists_fitting_profiles_smallest_first_then_whole_gpu():
    v = to_dra(
        pod({"nvidia.com/gpu": 1}, {"kubedra.io/gpu-memory": "18Gi"}), DraOptions("mig", offers=OFFERS)
    )
    (req,) = spec(v).requests
    assert req.exactly is None
    assert [s.name for s in req.first_available] == [
        "mig-1g-20gb",
        "mig-2g-20gb",
        "mig-3g-40gb",
        "mig-7g-80gb",
        "gpu",
    ]
    assert req.first_available[-1].device_class_name == "gpu.nvidia.com"
    assert all(len(s.selectors) == 2 or s.name == "gpu" for s in req.first_available)


def test_mig_sizing_needs_a_declared_need_and_never_guesses():
    v = to_dra(pod({"nvidia.com/gpu": 1}), DraOptions("mig", offers=OFFERS))
    assert exactly(spec(v).requests[0]).device_class_name == "gpu.nvidia.com"
    d = to_dra(pod({"nvidia.com/gpu": 1}), DraOptions("mig", gpu_memory=5 * GI, offers=OFFERS))
    assert spec(d).requests[0].first_available[0].name == "mig-1g-10gb"


def test_invalid_annotation_is_input_error():
    with pytest.raises(InputError, match=r"kubedra\.io/gpu-memory"):
        to_dra(pod({"nvidia.com/gpu": 1}, {"kubedra.io/gpu-memory": "lots"}), DraOptions())


def test_hami_resource_is_not_expressible():
    v = to_dra(pod({"nvidia.com/gpu": 1, "nvidia.com/gpumem": 3000}), DraOptions())
    assert v.error is not None
    assert "nvidia.com/gpumem" in (v.error or "")


def test_init_container_reuses_main_devices_unless_it_needs_more():
    assert (
        len(spec(to_dra(pod({"nvidia.com/gpu": 2}, init={"nvidia.com/gpu": 1}), DraOptions())).requests) == 1
    )
    more = to_dra(pod({"nvidia.com/gpu": 1}, init={"nvidia.com/gpu": 3}), DraOptions())
    assert [exactly(r).count for r in spec(more).requests] == [1, 3]


def test_pod_without_gpu_is_unchanged():
    p = pod({})
    v = to_dra(p, DraOptions())
    assert v.pod is p
    assert v.spec is None


def _claim(*reqs: DeviceRequest, constraints=()) -> DeviceClaim:
    return DeviceClaim(requests=list(reqs), constraints=list(constraints))


def test_claims_become_device_plugin_resources():
    p = pod({})
    spec = _claim(
        DeviceRequest("a", exactly=ExactDeviceRequest("gpu.nvidia.com", count=2)),
        DeviceRequest(
            "b",
            exactly=ExactDeviceRequest(
                "mig.nvidia.com", selectors=["device.attributes['gpu.nvidia.com'].profile == '1g.10gb+me'"]
            ),
        ),
    )
    new, reason = to_device_plugin(p, [("gpu", spec)])
    assert reason is None
    assert not new.resource_claims
    assert new.containers[0].limits["nvidia.com/gpu"].value() == 2
    assert new.containers[0].limits["nvidia.com/mig-1g.10gb.me"].value() == 1


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        (DeviceRequest("r", exactly=ExactDeviceRequest("gpu.example.com")), "DeviceClass gpu.example.com"),
        (
            DeviceRequest(
                "r", exactly=ExactDeviceRequest("gpu.nvidia.com", selectors=["device.attributes['x'].y == 1"])
            ),
            "selects devices with CEL",
        ),
        (
            DeviceRequest("r", exactly=ExactDeviceRequest("gpu.nvidia.com", allocation_mode="All")),
            "all matching",
        ),
        (DeviceRequest("r", first_available=[DeviceSubRequest("s", "gpu.nvidia.com")]), "prioritised list"),
    ],
)
def test_what_the_device_plugin_cannot_express(request_, why):
    _, reason = to_device_plugin(pod({}), [("c", _claim(request_))])
    assert reason is not None
    assert reason.startswith("not expressible with the device plugin")
    assert why in reason


def test_constraints_are_not_expressible():
    spec = _claim(
        DeviceRequest("r", exactly=ExactDeviceRequest("gpu.nvidia.com")),
        constraints=[DeviceConstraint(match_attribute="gpu.nvidia.com/parentUUID")],
    )
    _, reason = to_device_plugin(pod({}), [("c", spec)])
    assert "constrains" in (reason or "")


PROFILES = ["1g.10gb", "2g.20gb", "3g.40gb", "1g.10gb+me"]


@settings(max_examples=60, deadline=None)
@given(
    gpus=st.integers(min_value=0, max_value=8),
    migs=st.dictionaries(st.sampled_from(PROFILES), st.integers(min_value=1, max_value=4), max_size=3),
)
def test_round_trip_keeps_the_device_plugin_request(gpus, migs):
    """DP -> DRA -> DP gives back the same GPU resources (whole GPUs and MIG profiles)."""
    resources = {f"nvidia.com/mig-{p.replace('+', '.')}": n for p, n in migs.items()}
    if gpus:
        resources["nvidia.com/gpu"] = gpus
    v = to_dra(pod(resources), DraOptions())
    if not resources:
        assert v.spec is None
        return
    assert v.claim_name is not None
    back, reason = to_device_plugin(v.pod, [(v.claim_name, spec(v))])
    assert reason is None
    got = {k: q.value() for k, q in back.containers[0].limits.items() if k.startswith("nvidia.com/")}
    assert got == resources
    assert sum(w.count for w in v.wants) == sum(resources.values())
