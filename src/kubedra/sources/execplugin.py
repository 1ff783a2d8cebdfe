"""Exec credential plugins (a kubeconfig's ``users[].user.exec``): run within the request bounds, answers
checked as client-go checks them.

The kubernetes client runs a plugin with ``subprocess`` and waits for it without a timeout, so a plugin that
hangs (a stalled token service, a login that waits for a browser) hung kubedra for ever; and when a plugin
fails, or answers without usable credentials, the client logs it and goes on without credentials.
:func:`install` puts :class:`CheckedExecProvider`-type providers in the client's ``kube_config`` module: each
runs its plugin as client-go does (``KUBERNETES_EXEC_INFO``, ``interactiveMode``, ``provideClusterInfo``) in a
session of its own, waits at most the current request timeout (or what is left of ``--deadline``) and kills
the plugin's whole process group past it, and checks the answer (:mod:`kubedra.sources.execcredential`).
Every refusal is an :class:`Escape` carrying a one-line :class:`~kubedra.errors.ClusterError` naming the
plugin's command out of the client (a ``BaseException``, so the client's ``except Exception`` does not turn it
into a log line). :func:`kubedra.sources.cluster.api_client` and its requests raise the ClusterError. What
the client does with a checked answer (a token, or a certificate and key, and their expiry) is unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any

from kubedra.errors import ClusterError
from kubedra.sources import execcredential
from kubedra.sources.execcredential import CredentialError


class Escape(BaseException):
    """Carries ``error`` through the kubernetes client's ``except Exception`` handlers."""

    def __init__(self, error: ClusterError) -> None:
        super().__init__(str(error))
        self.error = error


_timeout: Callable[[], float] = lambda: 30.0  # noqa: E731 - replaced by install()


class BoundedPopen(subprocess.Popen[Any]):
    """A plugin process: its own session (so all it starts can be killed), waited for within the bounds."""

    def __init__(self, args: Any, *a: Any, interactive: bool = False, **kw: Any) -> None:
        # Not when interactive: a login prompt needs the terminal (a new session has none).
        self.session = os.name == "posix" and not interactive
        if self.session:
            kw["start_new_session"] = True
        self.command = str(args[0] if isinstance(args, list | tuple) and args else args)
        super().__init__(args, *a, **kw)

    def communicate(self, input: Any = None, timeout: float | None = None) -> Any:
        try:
            limit = _timeout()
        except ClusterError as e:  # the --deadline has passed
            self._kill()
            raise Escape(e) from None
        try:
            return super().communicate(input, timeout=limit if timeout is None else min(timeout, limit))
        except subprocess.TimeoutExpired:
            self._kill()
            raise Escape(
                ClusterError(
                    f"exec credential plugin {self.command!r} gave no credentials within {limit:g} s: stopped "
                    "(--request-timeout and --deadline bound it; run the command yourself to see why it hangs)"
                )
            ) from None

    def _kill(self) -> None:
        with contextlib.suppress(OSError):
            if self.session:
                os.killpg(self.pid, signal.SIGKILL)
            else:
                self.kill()
        # reap it; the pipes close once the whole group is gone (bounded: a child may have left the group)
        with contextlib.suppress(subprocess.TimeoutExpired, OSError, ValueError):
            super().communicate(timeout=5)


def _refuse(command: Any, problem: str) -> Escape:
    name = f"{command!r}" if isinstance(command, str) and command else "(no command)"
    return Escape(ClusterError(f"exec credential plugin {name} {problem}"))


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


@functools.cache
def provider_type() -> type:
    """The kubernetes client's ``ExecProvider`` with kubedra's checks and bounds (see the module)."""
    from kubernetes.config.exec_provider import ExecProvider  # noqa: PLC0415 - imported only when used
    from kubernetes.config.kube_config import ConfigNode  # noqa: PLC0415

    class CheckedExecProvider(ExecProvider):
        def __init__(self, exec_config: Any, cwd: Any, cluster: Any = None) -> None:
            config = getattr(exec_config, "value", exec_config)
            command = config.get("command") if isinstance(config, dict) else None
            problem = execcredential.config_problem(config)
            if problem:
                raise _refuse(command, f"cannot be run: the kubeconfig's {problem}")
            # an env item without a value is an empty one in client-go (the Python client refused it)
            env = [{"name": e["name"], "value": e.get("value") or ""} for e in config.get("env") or []]
            node = ConfigNode(getattr(exec_config, "name", "exec"), {**config, "env": env})
            super().__init__(node, cwd, cluster)  # type: ignore[no-untyped-call]  # kubernetes: no type hints
            self.mode = execcredential.interactive_mode(config)
            self.info_cluster = getattr(self.cluster, "value", None) if self.cluster else None

        def run(self, previous_response: Any = None) -> dict[str, str]:
            return run(self)

    return CheckedExecProvider


def run(provider: Any) -> dict[str, str]:
    """Run the plugin of ``provider`` (a :func:`provider_type` instance) once; its checked ``status``."""
    command = str(provider.args[0])
    try:
        interactive = execcredential.interactive(provider.mode, _stdin_is_terminal())
        spec: dict[str, Any] = {"interactive": interactive}
        if provider.info_cluster is not None:
            spec["cluster"] = execcredential.cluster_info(provider.info_cluster, provider.cwd)
    except CredentialError as e:
        raise _refuse(command, str(e)) from None
    env = dict(provider.env)
    env["KUBERNETES_EXEC_INFO"] = json.dumps(
        {"apiVersion": provider.api_version, "kind": "ExecCredential", "spec": spec}
    )
    try:
        process = BoundedPopen(
            provider.args,
            interactive=interactive,
            stdout=subprocess.PIPE,
            # like kubectl, an interactive plugin has the terminal; otherwise its stdin is empty and its
            # stderr is kept for the error line (kubedra's own stdin may be an input: it is not the plugin's)
            stdin=None if interactive else subprocess.DEVNULL,
            stderr=None if interactive else subprocess.PIPE,
            cwd=provider.cwd,
            env=env,
            text=True,
            errors="replace",
            shell=provider.shell,
        )
    except OSError as e:
        raise _refuse(command, f"cannot be run: {e.strerror or e}") from None
    stdout, stderr = process.communicate()
    try:
        if process.returncode != 0:
            raise CredentialError(execcredential.failure(process.returncode, stderr))
        return execcredential.read(stdout, provider.api_version)
    except CredentialError as e:
        raise _refuse(command, str(e)) from None


def install(timeout: Callable[[], float]) -> None:
    """Check and bound every exec credential plugin the kubernetes client runs (``timeout()`` seconds;
    idempotent)."""
    global _timeout
    from kubernetes.config import kube_config  # noqa: PLC0415 - the client is imported only when used

    _timeout = timeout
    setattr(kube_config, "ExecProvider", provider_type())  # noqa: B010 - the client reads it at each login
