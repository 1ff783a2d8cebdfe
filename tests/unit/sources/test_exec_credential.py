"""Exec credential plugins: right, or cannot because. A plugin that fails or answers without usable credentials
stops every verb that reads a cluster with exit 2 and one stderr line naming the plugin and what was wrong
(the kubernetes Python client logged it and went on without credentials: a 401, or an anonymous read with
other permissions). The rules are client-go's refreshCredsLocked/isInteractive and clientcmd's
validateAuthInfo (k8s.io/client-go plugin/pkg/client/auth/exec/exec.go, tools/clientcmd/validation.go);
the messages quoted below in comments are client-go's for the same answer.

Each plugin is a real script named in a real kubeconfig; nothing listens at the kubeconfig's server (the
plugin runs, and is refused, before any request is sent)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.errors import ClusterError
from kubedra.sources import cluster, execplugin
from kubedra.sources.limits import limits
from kubedra.testing.cli import run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="shell-script plugins")

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"
FIXTURES = Path(__file__).parents[2] / "fixtures" / "execcred"
CERT = (FIXTURES / "client.crt").read_text()
KEY = (FIXTURES / "client.key").read_text()
OTHER_KEY = (FIXTURES / "other.key").read_text()


def cred(status: Any = None, api_version: str = V1, kind: str = "ExecCredential", **extra: Any) -> str:
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, **extra}
    if status is not None:
        obj["status"] = status
    return json.dumps(obj)


def setup(
    tmp: Path,
    stdout: str,
    *,
    code: int = 0,
    stderr: str = "",
    script: str = "",
    exec_config: dict[str, Any] | None = None,
    cluster_extra: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """A kubeconfig whose user runs a plugin that prints ``stdout`` (and ``stderr``) and exits ``code``."""
    (tmp / "answer").write_text(stdout)
    (tmp / "errors").write_text(stderr)
    plugin = tmp / "my plugin.sh"
    plugin.write_text(f"#!/bin/sh\n{script}cat '{tmp / 'answer'}'\ncat '{tmp / 'errors'}' >&2\nexit {code}\n")
    plugin.chmod(0o755)
    exec_cfg = {"apiVersion": V1, "command": str(plugin), "interactiveMode": "Never", **(exec_config or {})}
    kc = tmp / "kubeconfig"
    kc.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "c", "cluster": {"server": "https://127.0.0.1:9", **(cluster_extra or {})}}
                ],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
                "users": [
                    {"name": "u", "user": {"exec": {k: v for k, v in exec_cfg.items() if v is not None}}}
                ],
            }
        )
    )
    return kc, plugin


def refused(kc: Path, tmp: Path) -> str:
    """``kubedra snapshot`` with this kubeconfig: exit 2, nothing on stdout, nothing written; the one line."""
    out = tmp / "snap.yaml"
    r = run("snapshot", "--kubeconfig", str(kc), "-o", str(out), "--request-timeout", "5")
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == "", (r.exit_code, r.stdout, r.stderr)
    assert not out.exists(), (r.exit_code, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr.removeprefix("kubedra: error: ").rstrip("\n")


BAD_ANSWERS = [
    # exec: executable X failed with exit code 3 (client-go shows the plugin's stderr; here its last line)
    pytest.param(
        {"stdout": "", "code": 3, "stderr": "trying the token service\nerror: login expired, run login\n"},
        "failed with exit code 3: error: login expired, run login",
        id="exit-code",
    ),
    pytest.param({"stdout": "", "code": 1}, "failed with exit code 1 (nothing on stderr)", id="exit-silent"),
    pytest.param({"stdout": "", "script": "kill -9 $$\n"}, "was killed by signal 9", id="killed"),
    # decoding stdout: ...
    pytest.param(
        {"stdout": '{"apiVersion": "client.auth'}, "printed output that is not JSON (", id="bad-json"
    ),
    pytest.param(
        {"stdout": "Please log in at https://example.com/device\n"},
        "printed output that is not an ExecCredential object",
        id="text",
    ),
    pytest.param({"stdout": ""}, "printed nothing on stdout, not an ExecCredential", id="empty"),
    pytest.param(
        {"stdout": json.dumps({"kind": "ExecCredential", "status": {"token": "t"}})},
        "printed an object without apiVersion, not an ExecCredential",
        id="no-apiVersion",
    ),
    pytest.param(
        {"stdout": cred({"token": "t"}, kind="Pod")},
        f"printed Pod {V1}, not an ExecCredential",
        id="wrong-kind",
    ),
    pytest.param(
        {"stdout": cred({"token": "t"}, api_version="v1")},
        "printed ExecCredential v1, not an ExecCredential",
        id="wrong-group",
    ),
    # exec plugin is configured to use API version X, plugin returned version Y
    pytest.param(
        {"stdout": cred({"token": "t"}, api_version=V1BETA1)},
        f"returned apiVersion {V1BETA1}; the kubeconfig's exec.apiVersion is {V1}",
        id="wrong-apiVersion",
    ),
    # exec plugin didn't return a status field
    pytest.param({"stdout": cred()}, "returned no status", id="no-status"),
    pytest.param(
        {"stdout": cred(status=None, spec={"interactive": False}) + "\n"},
        "returned no status",
        id="no-status-spec",
    ),
    pytest.param({"stdout": cred("ok")}, "returned a status that is not an object", id="status-string"),
    # exec plugin didn't return a token or cert/key pair
    pytest.param(
        {"stdout": cred({})}, "returned neither a token nor a client certificate and key", id="empty-status"
    ),
    pytest.param(
        {"stdout": cred({"token": "", "expirationTimestamp": "2100-01-01T00:00:00Z"})},
        "returned neither a token nor a client certificate and key",
        id="empty-token",
    ),
    # exec plugin returned only certificate or key, not both
    pytest.param(
        {"stdout": cred({"clientCertificateData": CERT})},
        "returned a client certificate without its key",
        id="cert-only",
    ),
    pytest.param(
        {"stdout": cred({"token": "t", "clientKeyData": KEY})},
        "returned a client key without its certificate",
        id="key-only",
    ),
    # failed parsing client key/certificate
    pytest.param(
        {"stdout": cred({"clientCertificateData": CERT, "clientKeyData": OTHER_KEY})},
        "returned a client certificate and key that do not load (",
        id="key-of-another-cert",
    ),
    pytest.param(
        {"stdout": cred({"clientCertificateData": "not PEM", "clientKeyData": "not PEM"})},
        "returned a client certificate and key that do not load (",
        id="not-pem",
    ),
    pytest.param(
        {"stdout": cred({"token": "t", "clientCertificateData": CERT, "clientKeyData": KEY})},
        "returned both a token and a client certificate: kubectl sends both",
        id="token-and-cert",
    ),
    pytest.param(
        {"stdout": cred({"token": 42})}, "returned status.token that is not a string", id="token-number"
    ),
    pytest.param(
        {"stdout": cred({"token": "t", "expirationTimestamp": "tomorrow"})},
        "returned expirationTimestamp 'tomorrow', not an RFC 3339 time",
        id="bad-expiry",
    ),
]


@pytest.mark.parametrize(("plugin_output", "problem"), BAD_ANSWERS)
def test_a_bad_answer_is_one_line_naming_the_plugin_and_exit_2(
    tmp_path: Path, plugin_output: dict[str, Any], problem: str
) -> None:
    kc, plugin = setup(tmp_path, **plugin_output)
    line = refused(kc, tmp_path)
    assert line.startswith(f"exec credential plugin '{plugin}' {problem}"), line


def test_the_stderr_line_is_one_printable_line_of_bounded_length(tmp_path: Path) -> None:
    kc, plugin = setup(tmp_path, "", code=2, stderr="x\x1b[31m" + "y" * 500 + "\r\n\n")
    line = refused(kc, tmp_path)
    prefix = f"exec credential plugin '{plugin}' failed with exit code 2: "
    assert line.startswith(prefix), line
    assert line.isprintable(), line
    assert line.removeprefix(prefix) == "x [31m" + "y" * 191 + "..."


def test_an_env_item_without_a_value_is_an_empty_one(tmp_path: Path) -> None:
    out = tmp_path / "env"
    kc, _ = setup(
        tmp_path,
        cred({"token": "t"}),
        script=f"printf '%s' \"${{A-unset}}\" > '{out}'\n",
        exec_config={"env": [{"name": "A"}]},
    )
    _client(kc)
    assert out.read_text() == ""


def test_a_plugin_that_cannot_be_started(tmp_path: Path) -> None:
    kc, plugin = setup(tmp_path, "")
    plugin.chmod(0o644)
    assert refused(kc, tmp_path) == f"exec credential plugin '{plugin}' cannot be run: Permission denied"
    plugin.unlink()
    assert (
        refused(kc, tmp_path) == f"exec credential plugin '{plugin}' cannot be run: No such file or directory"
    )


BAD_CONFIGS = [
    # clientcmd validateAuthInfo: interactiveMode must be specified for u to use exec authentication plugin
    pytest.param(
        {"interactiveMode": None}, f"exec.interactiveMode must be specified with {V1}", id="no-mode"
    ),
    pytest.param(
        {"interactiveMode": "Sometimes"}, "exec.interactiveMode 'Sometimes' is not one of", id="bad-mode"
    ),
    # exec.go newAuthenticator: exec plugin: invalid apiVersion "client.authentication.k8s.io/v1alpha1"
    pytest.param(
        {"apiVersion": "client.authentication.k8s.io/v1alpha1"},
        "exec.apiVersion 'client.authentication.k8s.io/v1alpha1' is not one client-go runs",
        id="v1alpha1",
    ),
    pytest.param({"apiVersion": None}, "exec.apiVersion must be specified", id="no-apiVersion"),
    pytest.param({"command": ""}, "exec.command must be specified", id="no-command"),
    pytest.param({"env": [{"value": "A"}]}, "exec.env items need a name and a string value", id="env-name"),
    pytest.param(
        {"env": [{"name": "A", "value": 1}]}, "exec.env items need a name and a string value", id="env-value"
    ),
]


@pytest.mark.parametrize(("config", "problem"), BAD_CONFIGS)
def test_a_bad_exec_config_is_one_line_and_exit_2(
    tmp_path: Path, config: dict[str, Any], problem: str
) -> None:
    kc, plugin = setup(tmp_path, cred({"token": "t"}), exec_config=config)
    line = refused(kc, tmp_path)
    name = f"'{plugin}'" if config.get("command", 1) else "(no command)"
    assert line.startswith(f"exec credential plugin {name} cannot be run: the kubeconfig's {problem}"), line


def test_interactive_mode_always_needs_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # exec plugin cannot support interactive mode: standard input is not a terminal
    monkeypatch.setattr(execplugin, "_stdin_is_terminal", lambda: False)
    kc, plugin = setup(tmp_path, cred({"token": "t"}), exec_config={"interactiveMode": "Always"})
    assert refused(kc, tmp_path) == (
        f"exec credential plugin '{plugin}' needs interactiveMode Always, and standard input is not a terminal"
    )


def test_an_interactive_plugin_has_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its stderr is not kept (a login prompt is written there): the line says where it went."""
    monkeypatch.setattr(execplugin, "_stdin_is_terminal", lambda: True)
    kc, plugin = setup(
        tmp_path, "", code=4, stderr="prompt\n", exec_config={"interactiveMode": "IfAvailable"}
    )
    assert (
        refused(kc, tmp_path)
        == f"exec credential plugin '{plugin}' failed with exit code 4 (its stderr is above)"
    )


CLUSTER_VERBS = [
    pytest.param(["snapshot", "-o", "{tmp}/s.yaml"], id="snapshot"),
    pytest.param(["audit", "--cluster"], id="audit"),
    pytest.param(["verify"], id="verify"),
    pytest.param(["explain", "pod/p", "-n", "default"], id="explain"),
    pytest.param(["validate", "--server-dry-run", "{tmp}/cm.yaml"], id="validate"),
    pytest.param(["plan", "--fleet", "{tmp}/fleet.yaml"], id="plan"),
]


@pytest.mark.parametrize("args", CLUSTER_VERBS)
def test_every_verb_that_reads_a_cluster_stops_on_it(tmp_path: Path, args: list[str]) -> None:
    kc, plugin = setup(tmp_path, cred({}))
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: d}\n")
    fleet = {
        "apiVersion": "kubedra.io/v1alpha1",
        "kind": "Fleet",
        "clusters": [{"name": "x", "context": "x", "kubeconfig": str(kc), "distribution": "kubeadm"}],
    }
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump(fleet))
    argv = [a.format(tmp=tmp_path) for a in args]
    if argv[0] != "plan":
        argv += ["--kubeconfig", str(kc)]
    r = run(*argv, "--request-timeout", "5")
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert r.stdout == "", (r.exit_code, r.stdout, r.stderr)
    assert r.stderr == (
        f"kubedra: error: exec credential plugin '{plugin}' returned neither a token nor a client certificate "
        "and key\n"
    )


# The answers client-go takes, and what the client is then given.


def _client(kc: Path) -> Any:
    with limits(request_timeout=5):
        return cluster.api_client(str(kc), None).configuration


@pytest.mark.parametrize("version", [V1, V1BETA1])
def test_a_token(tmp_path: Path, version: str) -> None:
    # v1beta1 may leave interactiveMode out (clientcmd defaults it to IfAvailable)
    exec_config = (
        {"apiVersion": version} if version == V1 else {"apiVersion": version, "interactiveMode": None}
    )
    kc, _ = setup(tmp_path, cred({"token": "tok-1"}, api_version=version) + "\n", exec_config=exec_config)
    assert _client(kc).api_key == {"BearerToken": "Bearer tok-1"}


@pytest.mark.parametrize("version", [V1, V1BETA1])
def test_a_certificate_and_key(tmp_path: Path, version: str) -> None:
    answer = cred(
        {"clientCertificateData": CERT, "clientKeyData": KEY, "token": "", "expirationTimestamp": None},
        api_version=version,
    )
    kc, _ = setup(tmp_path, answer, exec_config={"apiVersion": version})
    cfg = _client(kc)
    assert "BearerToken" not in cfg.api_key  # an empty token is none (the Python client sent "Bearer ")
    assert Path(cfg.cert_file).read_text() == CERT
    assert Path(cfg.key_file).read_text() == KEY


def test_yaml_is_read_as_client_go_reads_it(tmp_path: Path) -> None:
    answer = f"apiVersion: {V1}\nkind: ExecCredential\nstatus:\n  token: tok-yaml\n"
    kc, _ = setup(tmp_path, answer)
    assert _client(kc).api_key == {"BearerToken": "Bearer tok-yaml"}


def test_an_expiry_in_the_future_and_one_with_fraction_and_offset(tmp_path: Path) -> None:
    for stamp in ("2100-01-01T00:00:00Z", "2100-01-01T00:00:00.123+02:00"):
        kc, _ = setup(tmp_path, cred({"token": "t", "expirationTimestamp": stamp}))
        assert _client(kc).api_key == {"BearerToken": "Bearer t"}


def test_an_expiry_already_past_is_taken_as_client_go_takes_it(tmp_path: Path) -> None:
    """getCreds refreshes an expired credential and uses what the plugin returns, past or not; the API server
    judges it. The plugin runs again before the next request (the Python client's refresh hook)."""
    kc, _ = setup(tmp_path, cred({"token": "old", "expirationTimestamp": "2000-01-01T00:00:00Z"}))
    cfg = _client(kc)
    assert cfg.api_key == {"BearerToken": "Bearer old"}
    assert cfg.refresh_api_key_hook is not None


def test_exec_info_as_client_go_sends_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KUBERNETES_EXEC_INFO: the exec apiVersion, interactive as isInteractive decides, spec.cluster only with
    provideClusterInfo (rest ConfigToExecCluster: the CA as data, the exec extension as config); the plugin's
    stdin is empty unless interactive (kubedra's own stdin may be an input)."""
    info = tmp_path / "info.json"
    monkeypatch.setattr(execplugin, "_stdin_is_terminal", lambda: True)
    (tmp_path / "ca.crt").write_text(CERT)
    script = f"printf '%s' \"$KUBERNETES_EXEC_INFO\" > '{info}'\n"
    cases: list[tuple[dict[str, Any], bool]] = [
        ({"interactiveMode": "Never"}, False),
        ({"interactiveMode": "IfAvailable"}, True),
        ({"apiVersion": V1BETA1, "interactiveMode": None}, True),
    ]
    for exec_config, interactive in cases:
        version = exec_config.get("apiVersion", V1)
        kc, _ = setup(
            tmp_path, cred({"token": "t"}, api_version=version), script=script, exec_config=exec_config
        )
        _client(kc)
        assert json.loads(info.read_text()) == {
            "apiVersion": version,
            "kind": "ExecCredential",
            "spec": {"interactive": interactive},
        }
    extension = {"audience": "kubedra"}
    kc, _ = setup(
        tmp_path,
        cred({"token": "t"}),
        script=script + f"cat > '{tmp_path / 'stdin'}'\n",
        exec_config={"provideClusterInfo": True},
        cluster_extra={
            "certificate-authority": "ca.crt",
            "tls-server-name": "api.example",
            "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": extension}],
        },
    )
    monkeypatch.setattr(execplugin, "_stdin_is_terminal", lambda: False)
    _client(kc)
    assert json.loads(info.read_text())["spec"] == {
        "interactive": False,
        "cluster": {
            "server": "https://127.0.0.1:9",
            "tls-server-name": "api.example",
            "certificate-authority-data": base64.b64encode(CERT.encode()).decode(),
            "config": extension,
        },
    }
    assert (tmp_path / "stdin").read_text() == ""


def test_a_refusal_inside_a_request_is_the_same_line(tmp_path: Path) -> None:
    """The client runs the plugin again inside a request once its token has expired; a bad second answer is
    refused there too (the client kept the old token and logged the error)."""
    marker = tmp_path / "answered"
    first = cred({"token": "old", "expirationTimestamp": "2000-01-01T00:00:00Z"})
    script = f"if [ -e '{marker}' ]; then echo '{cred({})}'; exit 0; fi\ntouch '{marker}'\n"
    kc, plugin = setup(tmp_path, first, script=script)
    with limits(request_timeout=5):
        client = cluster.Client(str(kc), None)
        with pytest.raises(ClusterError) as e:
            client.get_raw("/version")
    assert e.value.message == (
        f"exec credential plugin '{plugin}' returned neither a token nor a client certificate and key"
    )
