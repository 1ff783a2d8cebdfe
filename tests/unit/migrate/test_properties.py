"""Property tests: idempotence, byte-identical untouched documents, comments survive."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import docs, migrate_text

NAMES = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
COMMENTS = st.from_regex(r"# [a-zA-Z0-9 ,.]{0,20}", fullmatch=True)


@st.composite
def untouched_doc(draw: st.DrawFn) -> str:
    name = draw(NAMES)
    quote = draw(st.sampled_from(["", "'", '"']))
    comment = draw(st.one_of(st.just(""), COMMENTS.map(lambda c: "  " + c)))
    dash = draw(st.sampled_from(["", "  "]))
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {quote}{name}{quote}{comment}\n"
        f"data:\n  key: |\n    line one\n      indented\n  list: |-\n{dash}    - a\n"
    )


@st.composite
def gpu_doc(draw: st.DrawFn) -> str:
    name = draw(NAMES)
    kind = draw(st.sampled_from(["Deployment", "Job", "Pod", "StatefulSet"]))
    dash = draw(st.sampled_from(["", "  "]))
    n_containers = draw(st.integers(1, 3))
    ind = "    " if kind == "Pod" else "        "
    lines = []
    for i in range(n_containers):
        gpus = draw(st.integers(0, 4))
        quoted = draw(st.booleans())
        comment = draw(st.one_of(st.just(""), COMMENTS))
        lines.append(f"{ind}{dash}- name: c{i}\n")
        lines.append(f'{ind}{dash}  image: "img:{i}"\n')
        if comment:
            lines.append(f"{ind}{dash}  {comment}\n")
        if gpus or draw(st.booleans()):
            lines.append(f"{ind}{dash}  resources:\n{ind}{dash}    limits:\n")
            lines.append(f"{ind}{dash}      memory: 1Gi\n")
            if gpus:
                value = f'"{gpus}"' if quoted else str(gpus)
                lines.append(f"{ind}{dash}      nvidia.com/gpu: {value}\n")
    containers = "".join(lines)
    if kind == "Pod":
        return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n{containers}"
    group = "batch/v1" if kind == "Job" else "apps/v1"
    return (
        f"apiVersion: {group}\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n  template:\n"
        f"    spec:\n      containers:\n{containers}"
    )


@st.composite
def manifest_file(draw: st.DrawFn) -> tuple[str, list[str]]:
    parts = draw(st.lists(st.one_of(untouched_doc(), gpu_doc()), min_size=1, max_size=5))
    preamble = draw(st.one_of(st.just(""), COMMENTS.map(lambda c: c + "\n")))
    out = preamble
    for i, p in enumerate(parts):
        sep = draw(st.sampled_from(["---\n", "---\n\n", "--- # next\n"]))
        if i > 0 or draw(st.booleans()):
            out += sep
        out += p
    return out, parts


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(manifest_file())
def test_migrate_is_idempotent(case: tuple[str, list[str]]) -> None:
    text, _ = case
    once = migrate_text(text, gang=False).files[0].output
    assert migrate_text(once, gang=False).files[0].output == once


@FAST
@given(manifest_file())
def test_untouched_documents_are_byte_identical(case: tuple[str, list[str]]) -> None:
    text, parts = case
    out = migrate_text(text).files[0].output
    for p in parts:
        if "nvidia.com/gpu: " not in p or all(
            ln.strip().endswith((": 0", ': "0"')) for ln in p.splitlines() if "nvidia.com/gpu" in ln
        ):
            assert p in out


@FAST
@given(manifest_file())
def test_comments_survive_and_no_gpu_limit_is_left(case: tuple[str, list[str]]) -> None:
    text, _ = case
    out = migrate_text(text).files[0].output
    for line in text.splitlines():
        if line.strip().startswith("#"):
            assert line in out.splitlines()
    objs = docs(out)
    for obj in objs:
        assert "nvidia.com/gpu" not in str(obj)
    templates = {o["metadata"]["name"] for o in objs if o.get("kind") == "ResourceClaimTemplate"}
    for obj in objs:
        spec = obj.get("spec", {})
        pod = spec.get("template", {}).get("spec", spec) if obj.get("kind") != "ConfigMap" else {}
        for claim in pod.get("resourceClaims", []) if isinstance(pod, dict) else []:
            assert claim["resourceClaimTemplateName"] in templates
