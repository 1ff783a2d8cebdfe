"""One structural mutation of a real manifest at a time, for the cross-verb mutation fuzz
(``test_mutation_fuzz.py``).

The seeds are the real public manifests under ``tests/corpus`` and ``tests/realworld/inputs`` (sources and
licences beside them), a ``kubedra snapshot`` file and a fleet file. Each mutation takes the parsed documents
(or the file's bytes) and a ``random.Random`` and returns the bytes of the mutated file and a short label
saying what changed, so a failure names its input."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

TESTS = Path(__file__).resolve().parents[2]
SNAPSHOT = TESTS / "unit" / "plan" / "data" / "dev.yaml"  # a kubedra snapshot of a small GPU cluster
FLEET_TEXT = (
    "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n- name: dev\n  snapshot: snap.yaml\n"
    "  distribution: kubeadm\n  criticality: low\n"
)


def _loads(data: bytes) -> list[Any] | None:
    try:
        docs = list(yaml.safe_load_all(data.decode("utf-8")))
    except yaml.YAMLError:  # a Helm template that is not YAML: the byte-level mutations still take it
        return None
    return [d for d in docs if d is not None]


def manifest_seeds() -> list[Path]:
    files = sorted((TESTS / "corpus").rglob("*.yaml")) + sorted(
        (TESTS / "realworld" / "inputs").glob("*.yaml")
    )
    return [f for f in files if f.is_file()]


# ------------------------------------------------------------------------------------------ paths
Path_ = tuple[Any, ...]


def paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path in the tree (mapping keys, list indexes), the root excluded."""
    out: list[Path_] = []
    items: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        items = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    for key, child in items:
        out.append((*prefix, key))
        out.extend(paths(child, (*prefix, key)))
    return out


def get(node: Any, path: Path_) -> Any:
    for key in path:
        node = node[key]
    return node


def put(node: Any, path: Path_, value: Any) -> None:
    get(node, path[:-1])[path[-1]] = value


def _pick(
    rnd: random.Random, docs: list[Any], want: Callable[[Any, Path_], bool]
) -> tuple[int, Path_] | None:
    found = [(i, p) for i, doc in enumerate(docs) for p in paths(doc) if want(get(doc, p), p)]
    return rnd.choice(found) if found else None


def _label(i: int, path: Path_) -> str:
    return f"doc {i} ." + ".".join(str(k) for k in path)


# ------------------------------------------------------------------------------- tree mutations
def retype(rnd: random.Random, docs: list[Any]) -> str:
    """A value at a random path becomes another type: mapping, list, scalar or null."""
    hit = _pick(rnd, docs, lambda v, p: True)
    if hit is None:
        docs[0] = rnd.choice([[], "x", 0, None])
        return "doc 0 retyped"
    i, path = hit
    old = get(docs[i], path)
    choices: list[Any] = [{}, [], "x", 0, None, True, 1.5, {"a": "b"}, ["a"]]
    if isinstance(old, dict):
        choices += [list(old.values()), list(old.items())]
    if isinstance(old, list):
        choices += [{str(k): v for k, v in enumerate(old)}, old[0] if old else None]
    if not isinstance(old, dict | list):
        choices += [[old], {"value": old}]
    new = rnd.choice([c for c in choices if type(c) is not type(old)] or [None])
    put(docs[i], path, new)
    return f"{_label(i, path)}: {type(old).__name__} -> {json.dumps(new, default=str)[:60]}"


def _scalar_leaf(v: Any, p: Path_) -> bool:
    return not isinstance(v, dict | list)


def _number(v: Any, p: Path_) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def number_as_string(rnd: random.Random, docs: list[Any]) -> str:
    hit = _pick(rnd, docs, _number) or _pick(rnd, docs, _scalar_leaf)
    if hit is None:
        return retype(rnd, docs)
    i, path = hit
    old = get(docs[i], path)
    put(docs[i], path, rnd.choice([str(old), f"{old} ", "1e3", "0x10", "08", "1_000", "+1", "½"]))
    return f"{_label(i, path)}: number as string"


COUNTS = {
    "replicas",
    "count",
    "parallelism",
    "completions",
    "minAvailable",
    "minMember",
    "nvidia.com/gpu",
    "size",
    "numNodes",
    "workers",
    "minReplicas",
    "maxReplicas",
    "allocationMode",
    "priority",
}


def count(rnd: random.Random, docs: list[Any]) -> str:
    """A count or size (replicas, count, nvidia.com/gpu, ...) or any number becomes huge, zero or negative."""
    hit = _pick(rnd, docs, lambda v, p: isinstance(p[-1], str) and p[-1] in COUNTS) or _pick(
        rnd, docs, _number
    )
    if hit is None:
        return retype(rnd, docs)
    i, path = hit
    new = rnd.choice(
        [
            0,
            -1,
            -(2**31),
            2**31,
            2**63 - 1,
            2**63,
            2**64 + 1,
            -(2**63) - 1,
            10**30,
            "-1",
            "0",
            "99999999999999999999",
            1e300,
            -0.5,
        ]
    )
    put(docs[i], path, new)
    return f"{_label(i, path)}: -> {new!r}"


def empty(rnd: random.Random, docs: list[Any]) -> str:
    """A string, key, mapping or list becomes empty."""
    hit = _pick(rnd, docs, lambda v, p: isinstance(v, str | dict | list))
    if hit is None:
        return retype(rnd, docs)
    i, path = hit
    old = get(docs[i], path)
    if isinstance(old, str) or rnd.random() < 0.3:
        put(docs[i], path, "")
    else:
        put(docs[i], path, type(old)())
    if rnd.random() < 0.3 and isinstance(get(docs[i], path[:-1]), dict):  # an empty key too
        parent = get(docs[i], path[:-1])
        parent[""] = parent.pop(path[-1])
    return f"{_label(i, path)}: emptied"


ODD = [
    "a\x00b",
    "\x00",
    "a\x1bb",
    "\x7f",
    "\u202egpu",
    "名前",
    "gpu\u200b",
    "a\nb",
    "a\tb",
    "é" * 300,
    "\ufeff",
    "a" * 254,
    "A-UPPER",
    "-x-",
    "a/b",
    "a..b",
    " ",
    "\\",
    "\u0085",
    "\U0001f600",
]


def odd_name(rnd: random.Random, docs: list[Any]) -> str:
    """A name, key or string gets unicode, NUL or control characters."""
    names = _pick(
        rnd,
        docs,
        lambda v, p: (
            isinstance(v, str)
            and p[-1] in ("name", "namespace", "deviceClassName", "resourceClaimName", "driver", "pool")
        ),
    )
    hit = names if names and rnd.random() < 0.7 else _pick(rnd, docs, lambda v, p: isinstance(v, str))
    if hit is None:
        return retype(rnd, docs)
    i, path = hit
    new = rnd.choice(ODD)
    if rnd.random() < 0.3 and isinstance(get(docs[i], path[:-1]), dict):
        parent = get(docs[i], path[:-1])
        parent[new] = parent.pop(path[-1])
        return f"{_label(i, path)}: key -> {new!r}"
    put(docs[i], path, new)
    return f"{_label(i, path)}: -> {new!r}"


def deep(rnd: random.Random, docs: list[Any]) -> str:
    """A value wrapped in 100-300 levels of lists or mappings (kubedra's bound is 200)."""
    hit = _pick(rnd, docs, lambda v, p: True)
    if hit is None:
        return retype(rnd, docs)
    i, path = hit
    value = get(docs[i], path)
    levels = rnd.choice([100, 190, 199, 200, 201, 300])
    as_map = rnd.random() < 0.5
    for _ in range(levels):
        value = {"a": value} if as_map else [value]
    put(docs[i], path, value)
    return f"{_label(i, path)}: {levels} levels deep"


def aliases(rnd: random.Random, docs: list[Any]) -> str:
    """A subtree shared many times (the dumper writes an anchor and aliases), nested shares multiplying it."""
    hit = _pick(rnd, docs, lambda v, p: True)
    if hit is None:
        return retype(rnd, docs)
    i, path = hit
    value = get(docs[i], path)
    if not isinstance(value, dict | list):
        value = [value]
    levels, width = rnd.choice([(1, 200), (2, 50), (3, 30), (5, 12), (8, 8)])
    for _ in range(levels):
        value = [value] * width
    put(docs[i], path, value)
    return f"{_label(i, path)}: shared {width}^{levels} times"


def json_list(rnd: random.Random, docs: list[Any]) -> str:
    """The documents inside a JSON ``kind: List`` (kubectl get -o json)."""
    docs[:] = [{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": list(docs)}]
    return "JSON List wrapper"


TREE: dict[str, Callable[[random.Random, list[Any]], str]] = {
    "retype": retype,
    "number-as-string": number_as_string,
    "count": count,
    "empty": empty,
    "odd-name": odd_name,
    "deep": deep,
    "aliases": aliases,
    "json-list": json_list,
}


# ------------------------------------------------------------------------------- byte mutations
def dup_key(rnd: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = data.split(b"\n")
    keyed = [n for n, ln in enumerate(lines) if b": " in ln and not ln.lstrip().startswith((b"#", b"- "))]
    if not keyed:
        return data + b"\nkind: X\nkind: Y\n", "duplicated kind"
    n = rnd.choice(keyed)
    line = lines[n]
    key = line.split(b": ", 1)[0]
    dup = rnd.choice([line, key + b": duplicate", key + b": {}", key + b": [1]"])
    lines.insert(n + 1, dup)
    return b"\n".join(lines), f"line {n + 1} key duplicated: {dup[:60]!r}"


def non_utf8(rnd: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rnd.randrange(len(data) + 1)
    bad = rnd.choice([b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\x80\x80", b"\xfe\xff"])
    return data[:at] + bad + data[at:], f"byte {at}: {bad!r}"


def bom(rnd: random.Random, data: bytes) -> tuple[bytes, str]:
    text = data.decode("utf-8", "replace")
    kind = rnd.choice(["utf-8-bom", "utf-16", "utf-16-le", "utf-32", "bom-mid"])
    if kind == "utf-8-bom":
        return b"\xef\xbb\xbf" + data, kind
    if kind == "bom-mid":
        at = data.find(b"\n", len(data) // 2) + 1
        return data[:at] + b"\xef\xbb\xbf" + data[at:], kind
    return text.encode(kind), kind


def truncate(rnd: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rnd.randrange(len(data) + 1)
    return data[:at], f"truncated at byte {at} of {len(data)}"


BYTES: dict[str, Callable[[random.Random, bytes], tuple[bytes, str]]] = {
    "dup-key": dup_key,
    "non-utf8": non_utf8,
    "bom": bom,
    "truncate": truncate,
}
MUTATIONS = sorted([*TREE, *BYTES])


def dump(docs: list[Any], as_json: bool) -> bytes:
    if as_json:
        return (json.dumps(docs[0] if len(docs) == 1 else docs, default=str, ensure_ascii=False)).encode(
            "utf-8", "surrogatepass"
        )
    text = yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True, width=120)
    return text.encode("utf-8", "surrogatepass")


def mutate(rnd: random.Random, data: bytes, mutation: str) -> tuple[bytes, str]:
    """``data`` (a file's bytes) with one ``mutation`` applied, and what it changed."""
    if mutation in BYTES:
        return BYTES[mutation](rnd, data)
    docs = _loads(data)
    if not docs:
        return truncate(rnd, data)
    label = TREE[mutation](rnd, docs)
    # JSON for the List wrapper and sometimes otherwise; never for shared subtrees (JSON has no aliases: the
    # expansion would be a file of gigabytes, refused by size, whose writing alone takes the time budget)
    as_json = mutation == "json-list" or (mutation != "aliases" and rnd.random() < 0.15)
    return dump(docs, as_json=as_json), label
