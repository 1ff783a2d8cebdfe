"""Input files read into one :class:`~kubedra.model.inventory.Inventory` (``allocate``, ``explain``).

Apart from :mod:`kubedra.commands._common` so that the verbs that do not build an inventory (``audit``) do not
import the model's typed objects: about 40 dataclasses, 15-20 ms of a short run.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from kubedra.errors import InputError, UsageError
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.sources.files import load_reporting_templates


def load_inventory(files: Sequence[str], verb: str, not_read: list[InputError] | None = None) -> Inventory:
    """The inventory of ``files``. A Helm template or chart among them is named on stderr and left out (as
    audit, simulate and migrate do), added to ``not_read``: the caller's answer is then incomplete."""
    if not files:
        raise UsageError("no input: give PATH... or -f PATH (- for stdin)")
    result = load_reporting_templates(files, verb)
    for e in result.errors:
        click.echo(f"kubedra: not read: {e}", err=True)
    if not_read is not None:
        not_read.extend(result.errors)
    return build_inventory(result.documents)
