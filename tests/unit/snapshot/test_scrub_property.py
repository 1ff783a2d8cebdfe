"""Property: a secret planted in any kind of field a captured object can carry never reaches the snapshot
(env values, flags in every spelling, `sh -c` scripts, probe and lifecycle commands, httpGet headers,
annotations, last-applied-configuration, JSON in annotations, credentials in URLs, sensitive keys at any
depth, ConfigMaps and Secrets), while the facts kubedra reads (GPU limits, images, names) stay."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubedra.snapshot.scrub import scrub

SECRET = st.from_regex(r"S3cr[A-Za-z0-9]{8,20}", fullmatch=True)
FLAG_WORDS = st.sampled_from(
    [
        "token",
        "api_key",
        "api-key",
        "apikey",
        "password",
        "client-secret",
        "auth-token",
        "access_key",
        "bearer-token",
    ]
)
ENV_WORDS = st.sampled_from(
    ["API_KEY", "TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "secret"]
)
HEADERS = st.sampled_from(["Authorization", "authorization", "X-Api-Key", "Cookie", "Proxy-Authorization"])


@st.composite
def script(draw: st.DrawFn, s: str) -> str:
    """A shell script with the secret in one of the ways people put secrets in `sh -c`."""
    form = draw(
        st.sampled_from(
            [
                "export {env}={s} && python train.py",
                "{env}='{s}' ./run.sh",
                'curl -sf -H "Authorization: Bearer {s}" http://svc/healthz',
                "curl -H 'X-Api-Key: {s}' https://api.example.com",
                "git clone https://oauth2:{s}@gitlab.example.com/ml/repo.git",
                "git clone https://{s}@github.com/org/repo.git",
                "python serve.py --{flag} {s} --port 8080",
                "python serve.py --{flag}={s}",
                'echo \'{{"password": "{s}"}}\' > /tmp/cfg.json',
                "wget --header='Authorization: Basic {s}' http://x",
                "psql postgres://admin:{s}@db:5432/app -c 'select 1'",
            ]
        )
    )
    return form.format(s=s, env=draw(ENV_WORDS), flag=draw(FLAG_WORDS))


@st.composite
def planted(draw: st.DrawFn) -> tuple[dict[str, Any], str]:  # noqa: C901 - one branch per place a secret can be planted
    s = draw(SECRET)
    flag = draw(FLAG_WORDS)
    where = draw(
        st.sampled_from(
            [
                "env",
                "flag=",
                "flag-space",
                "sh-c",
                "probe-exec",
                "lifecycle",
                "http-header",
                "annotation-key",
                "last-applied",
                "annotation-json",
                "annotation-url",
                "url-field",
                "sensitive-key",
                "template-annotation",
                "configmap",
                "secret",
            ]
        )
    )
    container: dict[str, Any] = {
        "name": "main",
        "image": "nvcr.io/nvidia/pytorch:24.01",
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
    }
    meta: dict[str, Any] = {"name": "w", "namespace": "ml", "annotations": {"team": "ml"}}
    pod_meta: dict[str, Any] = {"labels": {"app": "w"}}
    spec_extra: dict[str, Any] = {}
    if where == "env":
        container["env"] = [{"name": draw(ENV_WORDS), "value": s}, {"name": "PLAIN", "value": s}]
    elif where == "flag=":
        container["args"] = [f"--{flag}={s}", "--v=2"]
    elif where == "flag-space":
        container["args"] = [f"--{flag}", s, "--v=2"]
    elif where == "sh-c":
        container["command"] = ["sh", "-c", draw(script(s))]
    elif where == "probe-exec":
        container["livenessProbe"] = {"exec": {"command": ["/bin/sh", "-c", draw(script(s))]}}
    elif where == "lifecycle":
        container["lifecycle"] = {"postStart": {"exec": {"command": ["bash", "-lc", draw(script(s))]}}}
    elif where == "http-header":
        header = draw(HEADERS)
        value = draw(st.sampled_from([s, f"Bearer {s}", f"Basic {s}"]))
        container["readinessProbe"] = {
            "httpGet": {"path": "/ready", "port": 8080, "httpHeaders": [{"name": header, "value": value}]}
        }
    elif where == "annotation-key":
        meta["annotations"][
            "example.com/" + draw(st.sampled_from(["api-token", "password", "auth", "secret-ref"]))
        ] = s
    elif where == "last-applied":
        meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(
            {"spec": {"template": {"spec": {"containers": [{"env": [{"name": "X", "value": s}]}]}}}}
        )
    elif where == "annotation-json":
        meta["annotations"]["example.com/config"] = json.dumps({"backend": {"password": s, "host": "db"}})
    elif where == "annotation-url":
        meta["annotations"]["example.com/endpoint"] = f"https://svc:{s}@registry.example.com/v2"
    elif where == "url-field":
        spec_extra["storageUri"] = f"s3://AKIA:{s}@bucket/models"
    elif where == "sensitive-key":
        key = draw(st.sampled_from(["password", "apiKey", "clientSecret", "token", "hfToken", "api_key"]))
        spec_extra["backend"] = {"auth": {key: s}, "host": "db"}
    elif where == "template-annotation":
        pod_meta["annotations"] = {"vault.example.com/agent-inject-token": s}
    elif where == "configmap":
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
            "data": {
                "config.conf": f"mode: ipvs\nclientConnection:\n  kubeconfig: /var/lib/{s}\ntoken: {s}\n"
            },
        }, s
    else:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": s}}, s
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "w"}},
            "template": {"metadata": pod_meta, "spec": {"containers": [container]}},
            **spec_extra,
        },
    }
    return obj, s


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted())
def test_no_planted_secret_reaches_the_snapshot(case: tuple[dict[str, Any], str]) -> None:
    obj, s = case
    out = scrub(obj)
    text = json.dumps(out)
    assert s not in text, text
    if out is not None and out["kind"] == "Deployment":
        c = out["spec"]["template"]["spec"]["containers"][0]
        assert c["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
        assert c["image"] == "nvcr.io/nvidia/pytorch:24.01"
        assert out["metadata"]["name"] == "w"
