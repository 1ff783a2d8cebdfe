"""DRA API versions -> v1 through kubedra.model.convert, and the 1.35 partitionable-slice split."""

from __future__ import annotations

import textwrap

from kubedra.validate.engine import validate_texts

from .helpers import by_kind, migrate_text, output

MIXED_SLICE = textwrap.dedent(
    """\
    apiVersion: resource.k8s.io/v1beta2
    kind: ResourceSlice
    metadata:
      name: node-1-gpu
    spec:
      driver: gpu.nvidia.com
      nodeName: node-1
      pool: {name: node-1, generation: 1, resourceSliceCount: 1}
      # one counter set per GPU
      sharedCounters:
      - name: gpu-0-counter-set
        counters:
          memory: {value: 80Gi}
      devices:
      - name: gpu-0
        consumesCounters:
        - counterSet: gpu-0-counter-set
          counters:
            memory: {value: 80Gi}
    """
)


def test_partitionable_slice_is_split_for_135_and_later() -> None:
    rep = migrate_text(MIXED_SLICE, target_version="1.37")
    out = rep.files[0].output
    counters, devices = by_kind(out, "ResourceSlice")
    assert counters["metadata"]["name"] == "node-1-gpu-counters"
    assert "devices" not in counters["spec"]
    assert counters["spec"]["sharedCounters"][0]["name"] == "gpu-0-counter-set"
    assert "sharedCounters" not in devices["spec"]
    assert (
        counters["spec"]["pool"]["resourceSliceCount"] == devices["spec"]["pool"]["resourceSliceCount"] == 2
    )
    assert {s["apiVersion"] for s in (counters, devices)} == {"resource.k8s.io/v1"}
    assert validate_texts([("o.yaml", out)], "1.37").valid
    assert any("split" in f.message for f in rep.findings)
    assert output(out) == out


def test_no_split_for_134() -> None:
    out = output(MIXED_SLICE, target_version="1.34")
    (s,) = by_kind(out, "ResourceSlice")
    assert s["apiVersion"] == "resource.k8s.io/v1"
    assert s["spec"]["sharedCounters"]
    assert s["spec"]["devices"]
    assert "# one counter set per GPU" in out
    assert validate_texts([("o.yaml", out)], "1.34").valid


def test_v1beta1_claim_template_and_classic_dra() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: resource.k8s.io/v1beta1
        kind: ResourceClaimTemplate
        metadata: {name: t}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                deviceClassName: gpu.nvidia.com  # the class
                count: 2
        ---
        apiVersion: resource.k8s.io/v1alpha2
        kind: ResourceClass
        metadata: {name: gpu.nvidia.com}
        driverName: gpu.resource.nvidia.com
        """
    )
    rep = migrate_text(text)
    out = rep.files[0].output
    (rct,) = by_kind(out, "ResourceClaimTemplate")
    assert rct["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}
    ]
    assert "# the class" in out
    (manual,) = rep.manual
    assert manual.line == 12
    assert "DeviceClass with CEL selectors" in manual.message
    # the classes named are those of the vendor whose classic driver the ResourceClass names
    assert "(NVIDIA: gpu.nvidia.com / mig.nvidia.com)" in manual.message
    assert out.endswith(text.split("---\n", 1)[1])  # the classic object is left as it was


def test_classic_mig_parameters_say_the_claim_of_their_vendor() -> None:
    # the NVIDIA classic driver's MigDeviceClaimParameters (tests/corpus/dra, gpu-test5-dynamic-mig)
    text = (
        "apiVersion: gpu.resource.nvidia.com/v1alpha1\nkind: MigDeviceClaimParameters\n"
        'metadata: {name: mig-2g}\nspec:\n  profile: "2g.10gb"\n'
    )
    (manual,) = migrate_text(text).manual
    assert manual.message.endswith(
        "(profile 2g.10gb: with the NVIDIA DRA driver request class mig.nvidia.com with selector "
        "device.attributes['gpu.nvidia.com'].profile == '2g.10gb')"
    )
    # a profile that is none of the vendor's: no guess at a class
    (manual,) = migrate_text(text.replace('"2g.10gb"', "weird")).manual
    assert "request class" not in manual.message
