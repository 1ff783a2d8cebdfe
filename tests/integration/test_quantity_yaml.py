"""An unquoted number in a manifest reaches the apiserver through sigs.k8s.io/yaml: go-yaml v2 resolves it (YAML
1.1-ish: ``0x10``, ``012``, ``1_000``, ``.5``, ``1e20`` a float64), the result is written as JSON, and
``Quantity.UnmarshalJSON`` parses the number's text. kubedra reads the same text (kubedra.sources.yamlscalars,
then kubedra.k8s.quantity.parse_quantity: a float as Go's encoding/json writes it) and must end with the value the
apiserver stores, or refuse where the value depends on the client (an integer past int64). Each manifest is
POSTed as ``application/yaml`` (the apiserver's own YAML decoding, sigs.k8s.io/yaml) with a server-side dry-run,
and the stored limit is compared with kubedra's reading, admitted as that release defaults it."""

from __future__ import annotations

import pytest

from kubedra.k8s import versions
from kubedra.k8s.podadmission import admitted
from kubedra.k8s.quantity import Quantity, QuantityError, QuantityNotModelled, parse_quantity, quantity_rules
from kubedra.sources.files import parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import create_ignore_exists
from kubedra.testing.kubeapi import ApiError
from kubedra.validate.engine import validate_documents

pytestmark = pytest.mark.integration

NAMESPACE = "kubedra-qyaml"
NINETEEN = "quantity.nineteenDigitInt64"

# unquoted, as a manifest may hold them
PLAIN = [
    "2",
    "1.5e3",
    "1e20",
    "1e21",
    "1e400",
    "0x10",
    "012",
    "08",
    "0o17",
    "0b101",
    "1_000",
    "1_0.5",
    ".5",
    "+1",
    "+.5",
    "1.",
    "1e+3",
    "1E3",
    "0.1e1",
    "1e-7",
    "0.00001",
    "-1_0",
    "9223372036854775807",
    "12345678901234567890",
    "99999999999999999999",
    "123456789012345678901234567890",
]


def _manifest(i: int, value: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        f"  name: y{i}\n  namespace: {NAMESPACE}\n"
        "spec:\n  containers:\n  - name: c\n    image: x:1\n    resources:\n      limits:\n"
        f"        example.com/gpu: {value}\n"
    )


def _server(cp: ControlPlane, text: str, resource: str = "example.com/gpu") -> str | None:
    """The limit the apiserver stores (server-side dry-run), or None when it refuses the pod."""
    path = f"/api/v1/namespaces/{NAMESPACE}/pods?dryRun=All"
    try:
        pod = cp.api.request("POST", path, text.encode(), content_type="application/yaml")
    except ApiError as e:
        if e.status not in (400, 422):  # refused as invalid; anything else is the testbed's failure
            raise
        return None
    return str(pod["spec"]["containers"][0]["resources"]["limits"][resource])


def _kubedra(text: str, release: str) -> tuple[Quantity | None, bool]:
    """(kubedra's reading of the limit as ``release`` holds it, whether kubedra validate refuses the pod)."""
    docs = parse_text(text, "pod.yaml").documents
    refused = bool(validate_documents(docs, release).errors)
    value = docs[0].obj["spec"]["containers"][0]["resources"]["limits"]["example.com/gpu"]
    try:
        q = parse_quantity(value)
    except QuantityError:
        return None, refused
    return admitted(q, release), refused


def _agree(cp: ControlPlane) -> None:
    create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    differ: dict[str, tuple[object, ...]] = {}
    client_dependent = 0
    for i, plain in enumerate(PLAIN):
        text = _manifest(i, plain)
        stored = _server(cp, text)
        reading, refused = _kubedra(text, cp.version)
        value = parse_text(text, "pod.yaml").documents[0].obj["spec"]["containers"][0]["resources"]["limits"]
        try:
            parse_quantity(value["example.com/gpu"])
        except QuantityNotModelled:
            client_dependent += 1  # kubedra says it cannot tell (kubectl sends a float64): it must refuse
            if not refused:
                differ[plain] = ("kubedra admits a value it says it cannot read", stored)
            continue
        with quantity_rules(versions.holds(NINETEEN, cp.version)):
            mine = None if refused or reading is None else reading.canonical()
        if mine != stored:
            differ[plain] = (mine, refused, stored)
    assert not differ, differ
    assert (
        client_dependent == 1
    )  # 12345678901234567890 (uint64): the only one past int64 go-yaml keeps an int


# quoted: the text is the quantity; String() (and so the stored object) keeps it where ParseQuantity's fast path
# found it canonical (kubedra.k8s.quantity.Quantity._kept_text)
QUOTED = [
    "+1",
    "1e+21",
    "1E3",
    "1e03",
    "+1Ki",
    "0001",
    "+2k",
    "5e-3",
    "1500m",
    "2000m",
    "1.5Gi",
    "1024Mi",
    "7Ki",
    "8Ki",
    "100",
    "1000",
    "1.0",
    "0.5",
    "1.5e3",
    "123456789012345678",
    "1234567890123456789",
]


def test_quoted_quantities_are_stored_as_kubedra_writes_them(controlplane: ControlPlane) -> None:
    _stored_text(controlplane)


def test_quoted_quantities_are_stored_as_each_release_writes_them(release_controlplane: ControlPlane) -> None:
    _stored_text(release_controlplane)


def _stored_text(cp: ControlPlane) -> None:
    create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    since = versions.holds(NINETEEN, cp.version)
    differ = {}
    for i, text in enumerate(QUOTED):
        manifest = _manifest(i, "1").replace("example.com/gpu: 1", f"memory: '{text}'")
        stored = _server(cp, manifest, "memory")
        with quantity_rules(since):
            mine = admitted(Quantity.parse(text, False), cp.version).canonical()
        if stored != mine:
            differ[text] = (mine, stored)
    assert not differ, differ


def test_unquoted_numbers_read_as_the_apiserver_stores_them(controlplane: ControlPlane) -> None:
    _agree(controlplane)


def test_unquoted_numbers_read_as_each_release_stores_them(release_controlplane: ControlPlane) -> None:
    _agree(release_controlplane)
