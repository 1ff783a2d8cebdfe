"""kubedra's bundled data files (``kubedra/data/*.yaml``), read with PyYAML's C loader when PyYAML has one.

They are read on every run; the pure-Python loader spends tens of milliseconds on the larger ones (the feature
gates), a tenth of a small ``kubedra simulate``. Both loaders build the same objects.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(name: str) -> Any:
    """The parsed contents of ``kubedra/data/<name>``."""
    return yaml.load(
        resources.files("kubedra.data").joinpath(name).read_text(encoding="utf-8"), Loader=_LOADER
    )
