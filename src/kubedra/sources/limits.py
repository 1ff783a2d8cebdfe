"""Time bounds for every request to a cluster: the commands' ``--request-timeout`` and ``--deadline``.

Apart from :mod:`kubedra.sources.cluster` (which re-exports it) so that a command wrapped in these options
does not import the cluster client, and the subprocess module with it, when it reads no cluster.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

from kubedra.errors import ClusterError, UsageError

DEFAULT_REQUEST_TIMEOUT = 30.0


class DeadlineExceeded(ClusterError):
    """The command's --deadline passed before a request could be sent."""


@dataclass
class Limits:
    """Time bounds for every request: ``request_timeout`` seconds each (connect and each read), and an optional
    ``deadline`` (a ``time.monotonic()`` instant) for the whole command."""

    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    deadline: float | None = None

    def timeout(self) -> float:
        """Seconds the next request may take; raises DeadlineExceeded once the deadline has passed."""
        if self.deadline is None:
            return self.request_timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded("the --deadline passed before every request was answered")
        return min(self.request_timeout, left)


_limits = Limits()


@contextlib.contextmanager
def limits(request_timeout: float | None = None, deadline: float | None = None) -> Iterator[Limits]:
    """Bound every request made inside the block (the commands' --request-timeout and --deadline)."""
    global _limits
    saved = _limits
    if request_timeout is not None and request_timeout <= 0:
        raise UsageError("--request-timeout must be a positive number of seconds")
    if deadline is not None and deadline <= 0:
        raise UsageError("--deadline must be a positive number of seconds")
    _limits = Limits(
        request_timeout=request_timeout or saved.request_timeout,
        deadline=time.monotonic() + deadline if deadline else saved.deadline,
    )
    try:
        yield _limits
    finally:
        _limits = saved


def current_limits() -> Limits:
    return _limits
