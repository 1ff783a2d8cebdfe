"""NVIDIA's ComputeDomain (``resource.nvidia.com``): the ResourceClaimTemplate its controller creates, and the
devices and classes the driver publishes for it on each GPU node (facts in ``data/nvidia-dra-driver.yaml``
``computeDomain``, with their sources).

A ComputeDomain names a template in ``spec.channel.resourceClaimTemplate.name``; the driver's controller creates it
in the ComputeDomain's namespace, and the workload's pods reference it by that name. Offline, that template is
modelled from the controller's own template, so pods that use it are checked and placed as in the cluster.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from kubedra.k8s import datafiles
from kubedra.vendors.base import ControllerOutput
from kubedra.vendors.nvidia.dra import device_classes
from kubedra.vendors.simulated import single_node_slice

RESOURCE_API = "resource.k8s.io/v1"


@functools.cache
def _facts() -> dict[str, Any]:
    data: dict[str, Any] = datafiles.load("nvidia-dra-driver.yaml")["computeDomain"]
    return data


def _get(obj: Any, path: list[str]) -> Any:
    for step in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(step)
    return obj


def is_compute_domain(obj: Mapping[str, Any]) -> bool:
    f = _facts()
    api = obj.get("apiVersion")
    return obj.get("kind") == f["kind"] and isinstance(api, str) and api.split("/", 1)[0] == f["apiGroup"]


def claim_template(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ResourceClaimTemplate the controller creates for ComputeDomain ``obj`` (None: not a ComputeDomain, or
    its spec names no template, which the CRD's schema rejects)."""
    if not is_compute_domain(obj):
        return None
    f = _facts()
    name = _get(obj, f["templateNameField"])
    if not isinstance(name, str) or not name:
        return None
    meta = _meta(obj)
    mode = _get(obj, f["allocationModeField"]) or f["allocationModeDefault"]
    params: dict[str, Any] = {**f["config"], "allocationMode": mode}
    uid = meta.get("uid")
    if isinstance(uid, str) and uid:
        params["domainID"] = uid  # the ComputeDomain's UID (only known once it exists)
    out_meta: dict[str, Any] = {"name": name}
    if isinstance(meta.get("namespace"), str) and meta["namespace"]:
        out_meta["namespace"] = meta["namespace"]
    request = f["request"]
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": out_meta,
        "spec": {
            "spec": {
                "devices": {
                    "requests": [{"name": request, "exactly": {"deviceClassName": f["deviceClassName"]}}],
                    "config": [
                        {"requests": [request], "opaque": {"driver": f["driver"], "parameters": params}}
                    ],
                }
            }
        },
    }


def node_slice(node_name: str) -> dict[str, Any]:
    """The ResourceSlice the compute-domain kubelet plugin publishes on ``node_name``."""
    f = _facts()
    driver = f["driver"]
    devices = [
        {
            "name": d["name"],
            "attributes": {"type": {"string": d["type"]}, "id": {"int": d["id"]}},
        }
        for d in f["nodeDevices"]
    ]
    return single_node_slice(node_name, driver, devices)


def controller_output(obj: Mapping[str, Any], k8s_version: str) -> ControllerOutput | None:
    """What the driver makes of ``obj`` when it is a ComputeDomain: the template, the ComputeDomain classes, and
    the slice each GPU node publishes for it."""
    template = claim_template(obj)
    if template is None:
        return None
    cd_driver = _facts()["driver"]
    classes = [
        c
        for c in device_classes(k8s_version, compute_domains=True)
        if cd_driver in c["spec"]["selectors"][0]["cel"]["expression"]
    ]
    return ControllerOutput(
        objects=[template],
        classes=classes,
        node_slice=node_slice,
        driver=cd_driver,
        origin=f"created by the NVIDIA DRA driver's ComputeDomain controller for ComputeDomain {_name(obj)}",
    )


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    ns, name = meta.get("namespace") or "default", meta.get("name") or "?"
    return f"{ns}/{name}"
