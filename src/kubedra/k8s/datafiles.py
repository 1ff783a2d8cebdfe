"""kubedra's bundled data files (``kubedra/data/...``), read with PyYAML's C loader when PyYAML has one.

They are read on every run; the pure-Python loader spends tens of milliseconds on the larger ones (the feature
gates), a tenth of a small ``kubedra simulate``. Both loaders build the same objects. The files are found
beside this package; ``importlib.resources`` (whose import brings tempfile, shutil and the archive modules,
another few percent of a small run) is only the fallback for an installation that is not a directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DATA = Path(__file__).resolve().parent.parent / "data"


def read_text(name: str) -> str:
    """The text of ``kubedra/data/<name>`` (``name`` may hold ``/``)."""
    path = _DATA / name
    if path.is_file():
        return path.read_text(encoding="utf-8")
    from importlib import resources  # noqa: PLC0415  (a zip or other non-directory installation)

    return resources.files("kubedra.data").joinpath(name).read_text(encoding="utf-8")


def names(folder: str) -> list[str]:
    """The names of the entries in ``kubedra/data/<folder>``."""
    path = _DATA / folder
    if path.is_dir():
        return [p.name for p in path.iterdir()]
    from importlib import resources  # noqa: PLC0415  (a zip or other non-directory installation)

    return [p.name for p in resources.files("kubedra.data").joinpath(folder).iterdir()]


def load(name: str) -> Any:
    """The parsed contents of ``kubedra/data/<name>``."""
    return yaml.load(read_text(name), Loader=_LOADER)
