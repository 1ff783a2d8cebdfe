"""Time-slicing scope: the device plugin shares GPUs per node, so each pod template gets the
sharing DeviceClass only when every node it can land on uses that config — else a manual item, never a guess."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.migrate.report import MigrationReport
from kubedra.migrate.shared_claims import candidate
from kubedra.migrate.sharing_scope import Scope, sharing_configmap

from .helpers import by_kind, migrate_text

DATA = Path(__file__).resolve().parents[2] / "data" / "sharing"
OPERATOR = (DATA / "gpu-operator-plugin-config.yaml").read_text()
NAMED = (DATA / "device-plugin-named-configs.yaml").read_text()


def deployment(name: str, selector: dict[str, str] | None = None, affinity: str = "") -> str:
    sel = ""
    if selector:
        sel = "      nodeSelector:\n" + "".join(f"        {k}: {v}\n" for k, v in selector.items())
    return (
        textwrap.dedent(
            f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {name}, namespace: ml}}
        spec:
          replicas: 4
          selector: {{matchLabels: {{app: {name}}}}}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec:
        """
        )
        + sel
        + affinity
        + textwrap.indent(
            textwrap.dedent(
                """\
            containers:
            - name: c
              image: cuda
              resources: {limits: {nvidia.com/gpu: 1}}
            """
            ),
            "      ",
        )
    )


def classes(rep: MigrationReport) -> dict[str, str]:
    """Deployment -> deviceClassName of its claim ("" when its GPU request was not rewritten)."""
    out = rep.files[0].output
    specs = {r["metadata"]["name"]: r["spec"]["spec"] for r in by_kind(out, "ResourceClaimTemplate")}
    specs.update({r["metadata"]["name"]: r["spec"] for r in by_kind(out, "ResourceClaim")})
    res = {}
    for d in by_kind(out, "Deployment"):
        if "-share-" in d["metadata"]["name"]:
            continue  # the other groups of a split Deployment
        claims = d["spec"]["template"]["spec"].get("resourceClaims") or []
        if not claims:
            res[d["metadata"]["name"]] = ""
            continue
        spec = specs[claims[0].get("resourceClaimTemplateName") or claims[0].get("resourceClaimName")]
        res[d["metadata"]["name"]] = spec["devices"]["requests"][0]["exactly"]["deviceClassName"]
    return res


def manual(rep: MigrationReport) -> list[str]:
    return [f.message for f in rep.findings if f.level == "manual"]


def test_gpu_operator_default_config_shares_every_node():
    rep = migrate_text(OPERATOR + "---\n" + deployment("a"))
    assert classes(rep) == {"a": "gpu-time-slicing.gpu.nvidia.com"}
    assert not manual(rep)


def test_gpu_operator_without_a_default_shares_only_labelled_nodes():
    text = OPERATOR.replace("      default: plugin-config.yaml\n", "")
    rep = migrate_text(text + "---\n" + deployment("a"))
    assert classes(rep) == {"a": ""}  # fallback "empty": only nodes labelled with the config share
    assert len(manual(rep)) == 1
    node = "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {pool: a}}\n"
    rep = migrate_text(text + node + "---\n" + deployment("a"))
    assert classes(rep) == {"a": "gpu.nvidia.com"}  # its only node has no label: exclusive GPUs
    assert not manual(rep)


def test_configmap_alone_cannot_say_whether_unlabelled_nodes_share():
    cm = OPERATOR.split("---\n")[0]
    rep = migrate_text(cm + "---\n" + deployment("a"))
    assert classes(rep) == {"a": ""}  # left unchanged
    (msg,) = manual(rep)
    assert "different configs" in msg
    assert "nvidia.com/device-plugin.config" in msg


def test_named_configs_decided_per_workload_from_its_node_selector():
    label = "nvidia.com/device-plugin.config"
    text = "---\n".join(
        [
            NAMED,
            deployment("free"),
            deployment("shared", {label: "config1"}),
            deployment("whole", {label: "config0"}),
        ]
    )
    rep = migrate_text(text)
    got = classes(rep)
    assert got["shared"] == "gpu-time-slicing.gpu.nvidia.com"
    assert got["whole"] == "gpu.nvidia.com"
    assert got["free"] == ""  # may land on config0 (default) or config1 nodes
    assert len(manual(rep)) == 1


def test_required_affinity_in_one_config_decides():
    aff = textwrap.indent(
        textwrap.dedent(
            """\
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions:
                    - {key: nvidia.com/device-plugin.config, operator: In, values: [config1]}
            """
        ),
        "      ",
    )
    rep = migrate_text(NAMED + "---\n" + deployment("a", affinity=aff))
    assert classes(rep) == {"a": "gpu-time-slicing.gpu.nvidia.com"}


def test_nodes_in_the_input_decide_for_an_unpinned_workload():
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n{i}\n  labels: {{nvidia.com/device-plugin.config: config1, pool: ts}}\n"
        for i in range(2)
    )
    nodes += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n9\n  labels: {pool: train}\n"
    rep = migrate_text(
        NAMED
        + nodes
        + "---\n"
        + deployment("ts", {"pool": "ts"})
        + "---\n"
        + deployment("tr", {"pool": "train"})
    )
    assert classes(rep) == {"ts": "gpu-time-slicing.gpu.nvidia.com", "tr": "gpu.nvidia.com"}
    assert not manual(rep)


def test_explicit_sharing_flag_overrides_the_scope():
    cm = OPERATOR.split("---\n")[0]
    rep = migrate_text(cm + "---\n" + deployment("a"), sharing="exclusive")
    assert classes(rep) == {"a": "gpu.nvidia.com"}
    assert not manual(rep)


# --- hostile shapes: any value where a mapping or list is expected is ignored, never a crash ------------------------

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 12), st.text(max_size=6), st.just("config1"))
_KEYS = [
    *("spec", "template", "containers", "initContainers", "env", "name", "value", "volumes", "configMap"),
    *("nodeSelector", "metadata", "labels", "devicePlugin", "config", "default", "affinity", "nodeAffinity"),
    *("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", "matchExpressions", "key"),
    *("operator", "values", "resources", "limits", "nvidia.com/gpu", "replicas", "command", "args"),
]
_any = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(ds=_any, policy=_any, node=_any, pod=_any)
def test_scope_ignores_malformed_objects(ds, policy, node, pod):
    cm = yaml.safe_load(NAMED.split("---\n")[0])
    objs = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "p"}, "spec": ds},
        {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "spec": policy},
        {"apiVersion": "v1", "kind": "Node", "metadata": node},
    ]
    found = sharing_configmap(cm, extended_resource=False, interval="Default")
    assert found is not None
    scope = Scope.build(objs, [(cm, *found)])
    d = scope.decide("nvidia.com/gpu", pod if isinstance(pod, dict) else {})
    assert d.manual is None or "nvidia.com/device-plugin.config" in d.manual
    candidate(
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": pod}, scope, set()
    )


def _affinity(*exprs: str, fields: str = "") -> str:
    body = "".join(f"      - {e}\n" for e in exprs)
    block = "  - matchExpressions:\n" + body if exprs else ""
    if fields:
        block += ("  - matchFields:\n" if not exprs else "    matchFields:\n") + f"      - {fields}\n"
    return textwrap.indent(
        "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      nodeSelectorTerms:\n" + textwrap.indent(block, "      "),
        "      ",
    )


def _nodes(*specs: tuple[str, str]) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\n"
        for name, labels in specs
    )


NODES_BY_MEMORY = _nodes(
    ("big", "nvidia.com/device-plugin.config: config1, gpu-mem: '80'"), ("small", "gpu-mem: '40'")
)


def test_gt_in_the_required_affinity_excludes_the_nodes_it_rules_out():
    """Gt/Lt are node selector operators with their API meaning: a pod that needs gpu-mem > 50 lands only on
    the config1 node. The old matcher took Gt/Lt as matching every node and asked for a manual decision."""
    aff = _affinity("{key: gpu-mem, operator: Gt, values: ['50']}")
    rep = migrate_text(NAMED + NODES_BY_MEMORY + "---\n" + deployment("a", affinity=aff))
    assert classes(rep) == {"a": "gpu-time-slicing.gpu.nvidia.com"}
    assert not manual(rep)


def test_match_fields_on_the_node_name_decide_with_the_nodes_in_the_input():
    """A term pinning metadata.name matches that node only (the old matcher ignored matchFields)."""
    aff = _affinity(fields="{key: metadata.name, operator: In, values: [small]}")
    rep = migrate_text(NAMED + NODES_BY_MEMORY + "---\n" + deployment("a", affinity=aff))
    assert classes(rep) == {"a": "gpu.nvidia.com"}
    assert not manual(rep)


@pytest.mark.parametrize(
    "expr",
    [
        "{key: gpu-mem, operator: Bigger, values: ['50']}",  # not an operator
        "{key: gpu-mem, operator: Gt, values: ['fifty']}",  # Gt needs one integer
        "{key: gpu-mem, operator: In, values: []}",  # In needs values
    ],
)
def test_an_invalid_required_affinity_is_a_manual_item_not_a_match(expr: str):
    """The apiserver refuses a pod whose node affinity is invalid: the old matcher took such a requirement as
    true and picked a config."""
    label = "{key: nvidia.com/device-plugin.config, operator: In, values: [config1]}"
    for nodes in (NODES_BY_MEMORY, ""):  # decided from the nodes, or from the affinity alone
        rep = migrate_text(NAMED + nodes + "---\n" + deployment("a", affinity=_affinity(label, expr)))
        assert classes(rep) == {"a": ""}
        (msg,) = manual(rep)
        assert "required node affinity is invalid" in msg
        assert "gpu-mem" in msg


def test_the_device_plugins_daemonset_is_the_scope_not_gfds():
    """GFD's DaemonSet reads the same configs through its own config-manager (the chart's daemonset-gfd.yml) but
    advertises nothing: a GFD DaemonSet listed after the plugin's, with another default, does not decide."""
    docs = NAMED.split("---\n")
    (plugin,) = [d for d in docs if "kind: DaemonSet" in d]
    gfd = (
        plugin.replace("name: nvdp-nvidia-device-plugin\n", "name: nvdp-gpu-feature-discovery\n")
        .replace("value: config0", "value: config1")
        .replace('command: ["nvidia-device-plugin"]', 'command: ["gpu-feature-discovery"]')
        .replace("name: nvidia-device-plugin-ctr", "name: gpu-feature-discovery-ctr")
    )
    assert "gpu-feature-discovery-ctr" in gfd
    assert '["gpu-feature-discovery"]' in gfd
    aff = textwrap.indent(
        textwrap.dedent(
            """\
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions:
                    - {key: nvidia.com/device-plugin.config, operator: DoesNotExist}
            """
        ),
        "      ",
    )
    rep = migrate_text("---\n".join([NAMED, gfd, deployment("unlabelled", affinity=aff)]))
    assert classes(rep) == {"unlabelled": "gpu.nvidia.com"}  # the plugin's default, config0: whole GPUs


def test_the_manual_item_names_the_label_the_plugin_reads():
    """A plugin DaemonSet started with another NODE_LABEL reads that label, so pinning the default one would do
    nothing: the manual item names the one the plugin reads."""
    named = NAMED.replace('value: "nvidia.com/device-plugin.config"', 'value: "example.com/gpu-config"')
    assert named != NAMED
    (msg,) = manual(migrate_text(named + "---\n" + deployment("free")))
    assert "pin the config with nodeSelector example.com/gpu-config: <config>" in msg
