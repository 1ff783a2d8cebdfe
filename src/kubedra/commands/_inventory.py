"""Input files read into one :class:`~kubedra.model.inventory.Inventory` (``allocate``, ``explain``).

Apart from :mod:`kubedra.commands._common` so that the verbs that do not build an inventory (``audit``) do not
import the model's typed objects: about 40 dataclasses, 15-20 ms of a short run.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubedra.errors import UsageError
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.sources.files import load


def load_inventory(files: Sequence[str]) -> Inventory:
    if not files:
        raise UsageError("no input: give PATH... or -f PATH (- for stdin)")
    result = load(files, strict=True)
    return build_inventory(result.documents)
