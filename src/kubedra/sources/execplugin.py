"""Exec credential plugins (a kubeconfig's ``users[].user.exec``) run within the request bounds.

The kubernetes client runs a plugin with ``subprocess`` and waits for it without a timeout, so a plugin that
hangs (a stalled token service, a login that waits for a browser) hung kubedra for ever; and when a plugin
fails, the client logs the error and goes on without credentials. :func:`install` gives the client's
``exec_provider`` module a ``subprocess`` whose ``Popen`` starts the plugin in a session of its own and waits
at most the current request timeout (or what is left of ``--deadline``): past it, the plugin's whole process
group is killed and :class:`Escape` carries a one-line :class:`~kubedra.errors.ClusterError` naming the
plugin's command out of the client (a ``BaseException``, so the client's ``except Exception`` does not turn
it into a log line). :func:`kubedra.sources.cluster.api_client` and its requests raise the ClusterError.
The rest of the client's handling of a plugin (its environment, ``KUBERNETES_EXEC_INFO``, its answer) is
unchanged.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any

from kubedra.errors import ClusterError


class Escape(BaseException):
    """Carries ``error`` through the kubernetes client's ``except Exception`` handlers."""

    def __init__(self, error: ClusterError) -> None:
        super().__init__(str(error))
        self.error = error


_timeout: Callable[[], float] = lambda: 30.0  # noqa: E731 - replaced by install()


class BoundedPopen(subprocess.Popen):
    """A plugin process: its own session (so all it starts can be killed), waited for within the bounds."""

    def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
        # Not when interactive (the client passes its stdin then): a login prompt needs the terminal.
        self.session = os.name == "posix" and kw.get("stdin") is None
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


class _Subprocess:
    """What the client's ``exec_provider`` module sees as ``subprocess``: the module, with a bounded Popen."""

    Popen = BoundedPopen

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)


def install(timeout: Callable[[], float]) -> None:
    """Bound every exec credential plugin the kubernetes client runs by ``timeout()`` seconds (idempotent)."""
    global _timeout
    from kubernetes.config import exec_provider  # noqa: PLC0415 - the client is imported only when used

    _timeout = timeout
    if not isinstance(exec_provider.subprocess, _Subprocess):
        exec_provider.subprocess = _Subprocess()  # type: ignore[assignment]
