"""No real-world corpus file gets a verdict the 1.37 apiserver contradicts: kubedra validate (offline) and a
server-side dry-run on the testbed's real kube-apiserver reject the same objects, before and after migrate.

Objects of custom resources are left out (the testbed has none of their CRDs), as are scheduling.k8s.io objects
(the testbed's apiserver serves them only with the GenericWorkload gate)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from tests.realworld import outcomes

from kubedra.migrate.context import MigrateOptions
from kubedra.migrate.engine import Migrator, load_sources
from kubedra.model.lifecycle import DeprecationDB
from kubedra.sources.files import Document, parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.validate.dryrun import dry_run
from kubedra.validate.engine import validate_documents
from kubedra.validate.rules import PUBLISHED_RULE
from kubedra.validate.schema import BUILTIN_GROUPS

pytestmark = pytest.mark.integration

_DB = DeprecationDB.load()


def _kubernetes_owned(d: Document) -> bool:
    group = d.api_version.rsplit("/", 1)[0] if "/" in d.api_version else ""
    if group.startswith("scheduling.k8s.io"):
        return False
    return group in BUILTIN_GROUPS or bool(
        _DB.versions_of(group, d.kind)
    )  # incl. removed groups (extensions)


def _documents(texts: list[tuple[str, str]]) -> list[Document]:
    docs: list[Document] = []
    for name, text in texts:
        docs.extend(d for d in parse_text(text, name).documents if d.api_version and d.kind)
    return [d for d in docs if _kubernetes_owned(d)]


def _ensure_namespaces(cp: ControlPlane, docs: list[Document]) -> None:
    from kubedra.testing.fakecluster import create_ignore_exists
    from kubedra.testing.kubeapi import ApiError

    for ns in sorted({d.namespace for d in docs if d.namespace}):
        # an invalid namespace name ("FILLED BY THE OPERATOR") cannot be created: its objects are refused, rightly
        with contextlib.suppress(ApiError):
            create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def _agree(cp: ControlPlane, docs: list[Document], version: str = "1.37") -> None:
    _ensure_namespaces(cp, docs)
    offline = validate_documents(docs, version)
    server = dry_run(docs, kubeconfig=str(cp.kubeconfig))
    # a selector reading what the NVIDIA driver never publishes is an error the apiserver cannot see (it does
    # not know the driver): such objects are left out of the comparison; an object refused for that alone and
    # also by the apiserver fails the first assertion below
    offline_bad = {(Path(e.file).name, e.kind, e.name) for e in offline.errors if e.rule != PUBLISHED_RULE}
    server_bad = {(Path(e.file).name, e.kind, e.name) for e in server}
    assert server_bad <= offline_bad, {"valid offline, refused by the apiserver": server_bad - offline_bad}
    assert offline_bad <= server_bad, {"invalid offline, accepted by the apiserver": offline_bad - server_bad}


def _inputs() -> list[Path]:
    return outcomes.inputs()  # inputs/ and the inputs kept once in tests/corpus


def _original(cp: ControlPlane, version: str) -> None:
    texts = []
    for p in _inputs():
        text = p.read_text()
        if not parse_text(text, str(p)).errors:
            texts.append((str(p), text))
    _agree(cp, _documents(texts), version)


def _migrated(cp: ControlPlane, version: str) -> None:
    sources = load_sources([str(p) for p in _inputs()])
    report = Migrator(MigrateOptions(target_version=version)).migrate(sources)
    texts = [
        (r.file, r.output) for r in report.files if not r.template and not parse_text(r.output, r.file).errors
    ]
    _agree(cp, _documents(texts), version)


def test_original_corpus_verdicts_match_the_apiserver(controlplane: ControlPlane) -> None:
    _original(controlplane, "1.37")


def test_migrated_corpus_verdicts_match_the_apiserver(controlplane: ControlPlane) -> None:
    _migrated(controlplane, "1.37")


def test_original_corpus_verdicts_match_each_release_apiserver(release_controlplane: ControlPlane) -> None:
    _original(release_controlplane, release_controlplane.version)


def test_migrated_corpus_verdicts_match_each_release_apiserver(release_controlplane: ControlPlane) -> None:
    _migrated(release_controlplane, release_controlplane.version)
