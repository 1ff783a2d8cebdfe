"""Hostile inputs: fixed cases (bombs, deep nesting, huge scalars, odd encodings, special files) and
hypothesis strategies for YAML/JSON structure, and the verbs that read files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import strategies as st

# verb -> argv for an input path and an --out folder (only migrate writes, and only there)
VERBS: dict[str, Callable[[str, str], list[str]]] = {
    "audit": lambda p, out: ["audit", p],
    "migrate": lambda p, out: ["migrate", p, "--out", out],
    "validate": lambda p, out: ["validate", p],
    "simulate": lambda p, out: ["simulate", p, "--nodes", "1x8xH100-80GB"],
    "allocate": lambda p, out: ["allocate", p],
    "explain": lambda p, out: ["explain", p, "--claim", "default/c"],
    "policy test": lambda p, out: ["policy", "test", p, "--policy", p],
}

CLAIM = (
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c\n  namespace: default\nspec:\n"
    "  devices:\n    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"
)
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  replicas: {replicas}\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        image: cuda\n"
    "        resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
)


def bomb(levels: int, width: int = 9) -> str:
    lines = ['  a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n" + "\n".join(lines) + "\n"


def fixed_files() -> dict[str, bytes]:
    """name -> content of every fixed hostile file."""
    deep = 600
    out: dict[str, str | bytes] = {
        "bomb.yaml": bomb(10),
        "bomb-wide.yaml": bomb(5, width=60),
        "bomb-in-list.yaml": "apiVersion: v1\nkind: List\nx: &x ["
        + ",".join(["1"] * 50)
        + "]\nitems:\n"
        + "".join(
            f"- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: m{i}}}, data: {{a: *x}}}}\n"
            for i in range(50)
        ),
        "merge-bomb.yaml": "a: &a {x: 1}\n"
        + "".join(f"b{i}: &b{i} {{<<: *{'a' if i == 0 else f'b{i - 1}'}, y{i}: 2}}\n" for i in range(200)),
        "recursive.yaml": "a: &a\n  b: *a\n",
        "deep-flow.yaml": "kind: X\na: " + "[" * deep + "]" * deep + "\n",
        "deep-block.yaml": "kind: X\n" + "".join(" " * i + "a:\n" for i in range(1, deep)),
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "huge-scalar.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: h}\ndata:\n  a: "
        + "x" * 4_000_000
        + "\n",
        "digits.yaml": DEPLOYMENT.format(replicas="9" * 5000),
        "replicas-huge.yaml": DEPLOYMENT.format(replicas=1_000_000_000),
        "replicas-float.yaml": DEPLOYMENT.format(replicas="1e+18"),
        # Quantities Go keeps small (int64Amount{1, 10000000}) but whose exact value is astronomically large or
        # small: each must be answered or refused in bounded time, never computed digit by digit.
        **{
            f"quantity-{name}.yaml": DEPLOYMENT.format(replicas=1).replace(
                "{limits: {nvidia.com/gpu: 1}}",
                f'{{requests: {{cpu: "{value}"}}, limits: {{nvidia.com/gpu: 1}}}}',
            )
            for name, value in (("huge", "1e10000000"), ("tiny", "1e-2147483647"), ("zero", "0e2147483647"))
        },
        "nan.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NaN}}',
        "json-digits.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "n": '
        + "7" * 5000
        + "}",
        "null-key.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n~: 1\n",
        "inf.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: .inf}\n",
        "bom-crlf.yaml": ("\ufeff" + CLAIM).replace("\n", "\r\n").encode("utf-8"),
        "utf16.yaml": CLAIM.encode("utf-16"),
        "latin1.yaml": ("# caf\xe9\n" + CLAIM).encode("latin-1"),
        "binary.yaml": bytes(range(256)) * 16,
        "nul.yaml": CLAIM + "\x00\n",
        "dup-keys.yaml": CLAIM.replace("  name: c\n", "  name: c\n  name: d\n"),
        "empty.yaml": "",
        "separators.yaml": "---\n---\n...\n---\n",
        "not-a-mapping.yaml": "- a\n- b\n---\n42\n",
        "yaml11-words.yaml": CLAIM.replace("name: c", "name: y").replace("- name: gpu", "- name: on"),
        "tags.yaml": "kind: X\na: !!binary aGVsbG8=\nb: !!set {x, y}\nc: !custom 1\nd: !!omap [{a: 1}]\n",
        "complex-key.yaml": "kind: X\n? [a, b]\n: c\n",
        "tabs.yaml": "kind: X\nmetadata:\n\tname: x\n",
        "unterminated.yaml": "kind: X\na: 'open\n",
        "template.yaml": "kind: Pod\nmetadata: {name: {{ .Values.name }}}\n",
        "long-line.yaml": "kind: X\nk: [" + ",".join(["1"] * 50_000) + "]\n",
        "many-docs.yaml": "".join(
            f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: m{i}}}\n" for i in range(1000)
        ),
    }
    return {k: (v.encode("utf-8") if isinstance(v, str) else v) for k, v in out.items()}


def write_case(folder: str, name: str, content: bytes) -> str:
    path = os.path.join(folder, name)
    with open(path, "wb") as fh:
        fh.write(content)
    return path


# ----------------------------------------------------------------------------------------- strategies
WORDS = [
    "y",
    "n",
    "yes",
    "No",
    "ON",
    "off",
    "~",
    "null",
    "true",
    "0x1F",
    "0o17",
    "08",
    "1e3",
    "1e+3",
    ".inf",
    "-.nan",
    "1:20",
    "2024-01-01",
    "<<",
    "-",
    "?",
    "&a",
    "*a",
    "!x",
    "%",
    "@",
    "`",
    "|",
    ">",
    "#",
    "'",
    '"',
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
    st.text(max_size=20),
    st.text(alphabet="ab\n\t \r\\\"'#:-{}[],&*!|>%@`", max_size=30),
    st.builds(lambda n: "x" * n, st.integers(0, 100_000)),
)
keys = st.one_of(st.text(min_size=1, max_size=10), st.sampled_from(WORDS), st.integers(0, 5), st.booleans())
trees = st.recursive(
    scalars, lambda c: st.lists(c, max_size=5) | st.dictionaries(keys, c, max_size=5), max_leaves=40
)
KINDS = [
    ("resource.k8s.io/v1", "ResourceClaim"),
    ("resource.k8s.io/v1", "ResourceSlice"),
    ("resource.k8s.io/v1", "DeviceClass"),
    ("apps/v1", "Deployment"),
    ("v1", "Pod"),
    ("v1", "ConfigMap"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    ("v1", "List"),
]


@st.composite
def k8s_objects(draw: st.DrawFn) -> dict[str, Any]:
    api, kind = draw(st.sampled_from(KINDS))
    obj: dict[str, Any] = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": draw(st.one_of(scalars, st.just("c")))},
    }
    for field in draw(st.lists(st.sampled_from(["spec", "data", "items", "status", "metadata"]), max_size=3)):
        obj[field] = draw(trees)
    return obj


def _nest(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """A file: one or more objects as YAML (block or flow, shared subtrees as anchors/aliases) or JSON, then
    byte-level oddities (BOM, CRLF, other encodings, duplicated or truncated lines)."""
    objs = draw(st.lists(k8s_objects(), min_size=1, max_size=3))
    as_json = draw(st.integers(0, 3)) == 0
    if not as_json and draw(
        st.booleans()
    ):  # shared subtrees: the dumper writes anchors and aliases, nested shares multiply
        shared: Any = draw(trees)
        for _ in range(draw(st.integers(0, 6))):
            shared = [shared] * draw(st.integers(1, 8))
        objs[0]["spec"] = shared
    if draw(st.booleans()):
        objs[-1]["deep"] = _nest(draw(scalars), draw(st.integers(0, 150)))  # deeper: the fixed cases
    if as_json:
        text = json.dumps(objs[0] if len(objs) == 1 else objs, default=str)
    else:
        text = yaml.safe_dump_all(
            objs, default_flow_style=draw(st.sampled_from([None, True, False])), allow_unicode=True, width=80
        )
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(0, 2))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["dup", "drop", "cut"]))
        if op == "dup":
            lines.insert(i, lines[i])
        elif op == "drop":
            del lines[i]
        else:
            lines[i] = lines[i][: len(lines[i]) // 2] + "\n"
    text = "".join(lines)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if draw(st.booleans()):
        text = "\ufeff" + text
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-32", "latin-1"]))
    return text.encode(encoding, errors="replace")
