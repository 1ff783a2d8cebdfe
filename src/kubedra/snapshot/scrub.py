"""Remove everything sensitive from a captured object before it is written (rules: ``data/snapshot/scrub.yaml``).

- Secrets are never kept (:func:`scrub` returns None for them); Helm release metadata is read by the capture
  and written to the header instead.
- ConfigMaps: only the ones kubedra reads are kept (kube-proxy mode, kubelet cgroup setting, kubeadm version,
  CoreDNS/kube-dns metadata, NVIDIA device-plugin sharing configs), each reduced to those facts.
- Every object: ``managedFields`` and the last-applied-configuration annotation go, annotations whose key
  looks sensitive go, values under sensitive keys (``token``, ``password``, ``caBundle``...) are replaced,
  container ``env`` values are dropped except an allow-list of GPU variables, and flags such as
  ``--token=...`` / ``--api_key X`` lose their value.
- Every string kept (``sh -c`` scripts, probe commands, annotation values, custom resources) is scrubbed as
  text: credentials in URLs (``https://user:pass@host``), ``Authorization: Bearer ...`` and other sensitive
  headers, ``PASSWORD=...`` / ``token: ...`` / ``--token ...`` inside the text. Annotation values that hold
  JSON are scrubbed as objects. ``name``/``value`` pairs whose name is a sensitive header or word
  (``httpGet.httpHeaders``) lose the value.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from kubedra.k8s import datafiles


@dataclass(frozen=True)
class Rules:
    dropped_annotations: frozenset[str]
    sensitive_annotation: re.Pattern[str]
    sensitive_keys: frozenset[str]
    redacted: str
    env_kept: frozenset[str]
    sensitive_flag: re.Pattern[str]
    sensitive_name: re.Pattern[str]
    sensitive_headers: frozenset[str]
    text_rules: tuple[tuple[re.Pattern[str], str], ...]
    kube_system: tuple[tuple[str, str], ...]
    device_plugin_keys: tuple[str, ...]


@functools.cache
def rules() -> Rules:
    text = datafiles.read_text("snapshot/scrub.yaml")
    raw: dict[str, Any] = yaml.safe_load(text)
    cms = raw["configMaps"]
    words = str(raw["sensitiveWords"])
    headers = frozenset(str(h).lower() for h in raw["sensitiveHeaders"])
    redacted = str(raw["REDACTED"])
    header_alt = "|".join(re.escape(h) for h in sorted(headers, key=len, reverse=True))
    value = r"""(?:"[^"]*"|'[^']*'|[^\s"',;&|}\]]+)"""
    text_rules = (
        # scheme://userinfo@host: the whole userinfo (a token is often the user name alone)
        (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@"), rf"\g<1>{redacted}@"),
        # sensitive headers: "Authorization: Bearer x", -H 'X-Api-Key: x'
        (re.compile(rf"(?i)\b({header_alt})(\s*:\s*)[^'\"\r\n]+"), rf"\g<1>\g<2>{redacted}"),
        (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+"), rf"\g<1> {redacted}"),
        # --token=x, --token x, TOKEN=x, "password": "x", password: x
        (re.compile(rf"(?i)(--?{words})(=|\s+)(?!-){value}"), rf"\g<1>\g<2>{redacted}"),
        (re.compile(rf"""(?i)(["']?\b{words}["']?)(\s*[:=]\s*){value}"""), rf"\g<1>\g<2>{redacted}"),
    )
    return Rules(
        dropped_annotations=frozenset(raw["droppedAnnotations"]),
        sensitive_annotation=re.compile(raw["sensitiveAnnotationPattern"], re.I),
        sensitive_keys=frozenset(k.lower() for k in raw["sensitiveKeys"]),
        redacted=redacted,
        env_kept=frozenset(raw["envValuesKept"]),
        sensitive_flag=re.compile(raw["sensitiveFlagPattern"], re.I),
        sensitive_name=re.compile(rf"^{words}$", re.I),
        sensitive_headers=headers,
        text_rules=text_rules,
        kube_system=tuple((str(k), str(v)) for k, v in cms["kubeSystem"].items()),
        device_plugin_keys=tuple(cms["devicePluginKeys"]),
    )


def scrub(obj: dict[str, Any]) -> dict[str, Any] | None:
    """A scrubbed copy of ``obj``, or None when the object must not be captured at all."""
    kind = obj.get("kind")
    if kind == "Secret":
        return None
    out = copy.deepcopy(obj)
    if kind == "ConfigMap":
        reduced = _configmap(out)
        if reduced is None:
            return None
        out = reduced
    _metadata(out)
    _walk(out, rules())
    return out


def _metadata(obj: dict[str, Any]) -> None:
    r = rules()
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    meta.pop("managedFields", None)
    ann = meta.get("annotations")
    if isinstance(ann, dict):
        kept = {
            k: _annotation_value(v, r)
            for k, v in ann.items()
            if k not in r.dropped_annotations and not r.sensitive_annotation.search(str(k))
        }
        if kept:
            meta["annotations"] = kept
        else:
            meta.pop("annotations", None)


def scrub_text(text: str, r: Rules | None = None) -> str:
    """``text`` without credentials in URLs, sensitive headers, ``NAME=value``/``--flag value`` secrets."""
    r = r or rules()
    for pattern, replacement in r.text_rules:
        text = pattern.sub(replacement, text)
    return text


def _annotation_value(value: Any, r: Rules) -> Any:
    """An annotation value scrubbed as text, or as an object when it holds JSON (configuration blobs)."""
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict | list):
            before = json.dumps(data)
            _walk(data, r)
            return value if json.dumps(data) == before else json.dumps(data, separators=(",", ":"))
    return scrub_text(value, r)


def _sensitive_pair(node: dict[str, Any], r: Rules) -> bool:
    """``{name: Authorization, value: ...}`` (httpHeaders) and other name/value pairs naming a secret."""
    name = node.get("name")
    return (
        isinstance(name, str)
        and "value" in node
        and (name.lower() in r.sensitive_headers or bool(r.sensitive_name.match(name)))
    )


def _walk(node: Any, r: Rules) -> None:
    if isinstance(node, dict):
        if _sensitive_pair(node, r) and node.get("value"):
            node["value"] = r.redacted
        for key in list(node):
            value = node[key]
            if key == "env" and isinstance(value, list):
                _env(value, r)
                _walk(value, r)
            elif key in ("args", "command") and isinstance(value, list):
                node[key] = [scrub_text(a, r) if isinstance(a, str) else a for a in _flags(value, r)]
            elif (
                isinstance(value, str | bytes)
                and value
                and (str(key).lower() in r.sensitive_keys or r.sensitive_name.match(str(key)))
            ):
                node[key] = r.redacted
            elif key == "metadata" and isinstance(value, dict):
                _metadata({"metadata": value})
                _walk(value, r)
            elif isinstance(value, str):
                node[key] = scrub_text(value, r)
            else:
                _walk(value, r)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, str):
                node[i] = scrub_text(v, r)
            else:
                _walk(v, r)


def _env(env: list[Any], r: Rules) -> None:
    for e in env:
        if isinstance(e, dict) and "value" in e and str(e.get("name")) not in r.env_kept:
            del e["value"]


def _flags(args: list[Any], r: Rules) -> list[Any]:
    out: list[Any] = []
    redact_next = False
    for a in args:
        if redact_next:
            out.append(r.redacted)
            redact_next = False
            continue
        text = str(a)
        m = r.sensitive_flag.match(text)
        if m and "=" in text:
            out.append(text.split("=", 1)[0] + "=" + r.redacted)
        elif m and text == m.group(0):
            out.append(a)
            redact_next = True  # "--token VALUE"
        else:
            out.append(a)
    return out


# ------------------------------------------------------------------------------------------- ConfigMaps


def _load(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def _pick(cfg: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: cfg[k] for k in keys if k in cfg}


def _reduce(kind: str, cfg: Any, r: Rules) -> dict[str, Any] | None:
    if not isinstance(cfg, dict):
        return None
    if kind == "kubeProxyMode":
        if str(cfg.get("kind", "KubeProxyConfiguration")) != "KubeProxyConfiguration" or "mode" not in cfg:
            return None
        return _pick(cfg, ("apiVersion", "kind", "mode"))
    if kind == "kubeletCgroup":
        if str(cfg.get("kind", "KubeletConfiguration")) != "KubeletConfiguration":
            return None
        if "failCgroupV1" not in cfg and "cgroupDriver" not in cfg:
            return None
        return _pick(cfg, ("apiVersion", "kind", "failCgroupV1", "cgroupDriver"))
    if kind == "kubeadmVersion":
        if cfg.get("kind") != "ClusterConfiguration":
            return None
        out = _pick(cfg, ("apiVersion", "kind", "kubernetesVersion"))
        etcd = cfg.get("etcd")
        if isinstance(etcd, dict):
            out["etcd"] = {k: {} for k in ("local", "external") if k in etcd}
        return out
    if kind == "devicePlugin":
        return _device_plugin(cfg, r)
    return None


def _device_plugin(cfg: dict[str, Any], r: Rules) -> dict[str, Any] | None:
    """NVIDIA device-plugin config (``version: v1`` with ``sharing`` or ``flags.migStrategy``) -> those keys."""
    if "sharing" not in cfg and not (isinstance(cfg.get("flags"), dict) and "migStrategy" in cfg["flags"]):
        return None
    out: dict[str, Any] = {}
    for key in r.device_plugin_keys:
        head, _, sub = key.partition(".")
        if head not in cfg:
            continue
        if sub:
            inner = cfg[head]
            if isinstance(inner, dict) and sub in inner:
                out.setdefault(head, {})[sub] = inner[sub]
        else:
            out[head] = cfg[head]
    return out


def _configmap(cm: dict[str, Any]) -> dict[str, Any] | None:
    r = rules()
    meta = cm.get("metadata") or {}
    name = str(meta.get("name") or "")
    ns = str(meta.get("namespace") or "")
    data = cm.get("data") if isinstance(cm.get("data"), dict) else {}
    assert isinstance(data, dict)
    mode: str | None = None
    if ns == "kube-system":
        mode = next((m for prefix, m in r.kube_system if name.startswith(prefix)), None)
    kept: dict[str, str] = {}
    if mode is not None and mode != "none":
        for key, text in data.items():
            reduced = _reduce(mode, _load(text), r)
            if reduced:
                kept[key] = _dump(reduced)
    if mode is None:
        for key, text in data.items():
            reduced = _reduce("devicePlugin", _load(text), r)
            if reduced:
                kept[key] = _dump(reduced)
        if not kept:
            return None  # not a ConfigMap kubedra reads: never captured
    out = {k: v for k, v in cm.items() if k not in ("data", "binaryData")}
    if kept:
        out["data"] = kept
    return out
