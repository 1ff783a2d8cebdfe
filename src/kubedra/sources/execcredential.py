"""What an exec credential plugin must be configured with and must answer, as client-go checks it.

The rules are client-go's (k8s.io/client-go, ``plugin/pkg/client/auth/exec/exec.go``: ``newAuthenticator``,
``isInteractive``, ``refreshCredsLocked``; ``tools/clientcmd/validation.go``: ``validateAuthInfo``;
``rest/exec.go``: ``ConfigToExecCluster``). The kubernetes Python client checks less: a plugin that exits
non-zero, prints no ExecCredential, no ``status``, or neither a token nor a certificate and key is logged and
the client goes on without credentials (the cluster then answers 401, or an anonymous read succeeds with other
permissions). Here each of those is a :class:`CredentialError` whose text completes "exec credential plugin
'COMMAND' ..." in one line; :mod:`kubedra.sources.execplugin` turns it into a ClusterError (exit 2).

One answer kubectl takes is refused, for a stated reason: a token together with a client certificate
(kubectl sends both and the API server tries the certificate first; the Python client sends only the token,
so kubedra could read as another user). Output in YAML is read, as client-go's universal decoder reads it. An
``expirationTimestamp`` already past is taken, as client-go takes it: the credential is used, the plugin runs
again before the next request, and the API server judges the credential (401 when it has expired).
"""

from __future__ import annotations

import base64
import os
import re
import ssl
import tempfile
from pathlib import Path
from typing import Any

from kubedra.errors import InputError
from kubedra.sources import yamlread

GROUP = "client.authentication.k8s.io"
# exec.go apiVersions: the versions client-go runs a plugin with (v1alpha1 was removed in Kubernetes 1.24).
API_VERSIONS = (f"{GROUP}/v1", f"{GROUP}/v1beta1")
# clientcmd/api: NeverExecInteractiveMode, IfAvailableExecInteractiveMode, AlwaysExecInteractiveMode.
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
# metav1.Time unmarshals with Go's time.RFC3339 layout ("2006-01-02T15:04:05Z07:00"; fractions accepted).
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
_STDERR_CHARS = 200


class CredentialError(ValueError):
    """Why a plugin's configuration or answer is refused; the text follows "exec credential plugin 'CMD' "."""


def config_problem(exec_config: Any) -> str | None:
    """Why a kubeconfig ``user.exec`` cannot be run as kubectl runs it (clientcmd ``validateAuthInfo`` and
    exec.go ``newAuthenticator``), or None."""
    if not isinstance(exec_config, dict):
        return "exec is not a mapping"
    command = exec_config.get("command")
    if not isinstance(command, str) or not command:
        return "exec.command must be specified"
    version = exec_config.get("apiVersion")
    if not version:
        return "exec.apiVersion must be specified"
    if version not in API_VERSIONS:
        return f"exec.apiVersion {version!r} is not one client-go runs ({', '.join(API_VERSIONS)})"
    mode = interactive_mode(exec_config)
    if mode == "":
        return f"exec.interactiveMode must be specified with {version} ({', '.join(INTERACTIVE_MODES)})"
    if mode not in INTERACTIVE_MODES:
        return f"exec.interactiveMode {mode!r} is not one of {', '.join(INTERACTIVE_MODES)}"
    for item in exec_config.get("env") or []:
        if not isinstance(item, dict) or not item.get("name") or not isinstance(item.get("value") or "", str):
            return "exec.env items need a name and a string value"
    return None


def interactive_mode(exec_config: dict[str, Any]) -> str:
    """``interactiveMode`` after clientcmd's defaulting: IfAvailable when a v1beta1 config leaves it out."""
    mode = exec_config.get("interactiveMode") or ""
    if not mode and exec_config.get("apiVersion") == f"{GROUP}/v1beta1":
        return "IfAvailable"
    return str(mode)


def interactive(mode: str, stdin_is_terminal: bool) -> bool:
    """Whether the plugin gets the terminal (exec.go ``isInteractive``): Never, IfAvailable (when standard input
    is a terminal), Always (refused when it is not)."""
    if mode == "Always" and not stdin_is_terminal:
        raise CredentialError("needs interactiveMode Always, and standard input is not a terminal")
    return mode == "Always" or (mode == "IfAvailable" and stdin_is_terminal)


def cluster_info(cluster: dict[str, Any], base: str | None) -> dict[str, Any]:
    """``spec.cluster`` of KUBERNETES_EXEC_INFO for ``provideClusterInfo: true`` (rest ``ConfigToExecCluster``:
    the CA as data, read from ``certificate-authority`` when the kubeconfig names a file; the
    ``client.authentication.k8s.io/exec`` extension as ``config``)."""
    out: dict[str, Any] = {"server": str(cluster.get("server") or "")}
    for key in ("tls-server-name", "proxy-url"):
        if cluster.get(key):
            out[key] = str(cluster[key])
    for key in ("insecure-skip-tls-verify", "disable-compression"):
        if cluster.get(key) is True:
            out[key] = True
    if cluster.get("certificate-authority-data"):
        out["certificate-authority-data"] = str(cluster["certificate-authority-data"])
    elif cluster.get("certificate-authority"):
        path = Path(base or ".", os.path.expanduser(str(cluster["certificate-authority"])))
        try:
            out["certificate-authority-data"] = base64.b64encode(path.read_bytes()).decode()
        except OSError as e:
            raise CredentialError(f"cannot get the cluster's CA ({path}: {e.strerror or e})") from None
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, dict) and ext.get("name") == f"{GROUP}/exec" and "extension" in ext:
            out["config"] = ext["extension"]
            break
    return out


def failure(returncode: int, stderr: str | None) -> str:
    """A plugin that exited non-zero (exec.go ``wrapCmdRunErrorLocked``), with the last line of its stderr
    (None: not kept, an interactive plugin's stderr is the terminal's)."""
    how = f"was killed by signal {-returncode}" if returncode < 0 else f"failed with exit code {returncode}"
    lines = [
        " ".join("".join(c if c.isprintable() else " " for c in line).split())
        for line in (stderr or "").splitlines()
    ]
    last = next((line for line in reversed(lines) if line), "")
    if len(last) > _STDERR_CHARS:
        last = last[: _STDERR_CHARS - 3] + "..."
    if stderr is None:  # interactive: the plugin wrote to the terminal
        return f"{how} (its stderr is above)"
    return f"{how}: {last}" if last else f"{how} (nothing on stderr)"


def read(stdout: str, api_version: str) -> dict[str, str]:
    """The ``status`` of the ExecCredential a plugin printed, checked as ``refreshCredsLocked`` does, with only
    the fields it set (an empty string is unset there: the Python client would send ``Bearer `` for it)."""
    obj = _decode(stdout)
    if not isinstance(obj, dict):
        raise CredentialError("printed output that is not an ExecCredential object")
    version, kind = obj.get("apiVersion"), obj.get("kind")
    if not version or not kind:
        raise CredentialError(
            f"printed an object without {'apiVersion' if not version else 'kind'}, not an ExecCredential"
        )
    if kind != "ExecCredential" or not str(version).startswith(f"{GROUP}/"):
        raise CredentialError(f"printed {kind!s} {version!s}, not an ExecCredential")
    if version != api_version:
        raise CredentialError(
            f"returned apiVersion {version!s}; the kubeconfig's exec.apiVersion is {api_version}"
        )
    status = obj.get("status")
    if status is None:
        raise CredentialError("returned no status (client-go: exec plugin didn't return a status field)")
    if not isinstance(status, dict):
        raise CredentialError("returned a status that is not an object")
    fields: dict[str, str] = {}
    for name in ("token", "clientCertificateData", "clientKeyData", "expirationTimestamp"):
        value = status.get(name)
        if value is not None and not isinstance(value, str):
            raise CredentialError(f"returned status.{name} that is not a string")
        if value:
            fields[name] = value
    token, cert, key = (fields.get(k) for k in ("token", "clientCertificateData", "clientKeyData"))
    if not (token or cert or key):
        raise CredentialError("returned neither a token nor a client certificate and key")
    if bool(cert) != bool(key):
        raise CredentialError(
            f"returned a client {'certificate without its key' if cert else 'key without its certificate'}"
        )
    if token and cert:
        raise CredentialError(
            "returned both a token and a client certificate: kubectl sends both (the API server tries the "
            "certificate first), the kubernetes Python client only the token, so kubedra could read as another user"
        )
    if cert and key:
        _check_pair(cert, key)
    expiry = fields.get("expirationTimestamp")
    if expiry is not None and not _RFC3339.fullmatch(expiry):
        raise CredentialError(f"returned expirationTimestamp {expiry!r}, not an RFC 3339 time")
    return fields


def _decode(stdout: str) -> Any:
    """JSON, or YAML (client-go's universal decoder reads both; JSON when the text starts with ``{``)."""
    text = stdout.strip()
    if not text:
        raise CredentialError("printed nothing on stdout, not an ExecCredential")
    if text.startswith("{"):
        try:
            return yamlread.load_json(text)
        except (ValueError, RecursionError) as e:
            raise CredentialError(f"printed output that is not JSON ({yamlread.json_problem(e)})") from None
    try:
        docs = yamlread.iter_documents(text, "<stdout>")
        first = next(docs, None)
    except InputError as e:
        raise CredentialError(f"printed output that is neither JSON nor YAML ({e})") from None
    return first[1] if first else None


def _check_pair(cert: str, key: str) -> None:
    """client-go's ``tls.X509KeyPair``: the certificate and key parse as PEM and belong together."""
    with tempfile.TemporaryDirectory(prefix="kubedra-exec-") as tmp:
        cert_file, key_file = Path(tmp, "cert.pem"), Path(tmp, "key.pem")
        for path, text in ((cert_file, cert), (key_file, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(str(cert_file), str(key_file))
        except (ssl.SSLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or str(e).splitlines()[0]
            raise CredentialError(
                f"returned a client certificate and key that do not load ({reason})"
            ) from None
