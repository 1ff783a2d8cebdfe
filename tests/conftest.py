"""Suite-wide test settings.

Under CI=true Hypothesis runs derandomized (examples derived from each test, no example database): a CI run
is reproducible and a submission's verdict does not depend on chance. Locally it keeps exploring new examples,
which is how the reader's key and float bugs were found; a failure found there is pinned with @example.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")
