"""The reports' Jinja2 templates, kept as package data in ``data/templates/``.

Two environments: :func:`html` (autoescape on, for ``*.html.j2`` and ``*.svg.j2``) and :func:`markdown`
(``*.md.j2``, no escaping). Both fail on an undefined name instead of printing nothing.

HTML and SVG templates are written one element per line, for reading; the loader drops every newline and
the indentation after it, so a page comes out compact (one line per section, as browsers and the tests
read it). A newline the output needs is written ``{{ "\\n" }}``; text and ``{{ }}``/``{% %}`` expressions
stay on one line.

Every value printed in HTML goes through :func:`html.escape` (``quote=True``), and ``None`` prints as
nothing (in Markdown, values print as ``str()`` does); values that are already HTML (macro output, ``|safe``, :class:`kubedra.report.html.Markup`)
are printed as they are.
"""

from __future__ import annotations

import functools
import html as _html
import re
from collections.abc import Callable
from typing import Any

import jinja2
from markupsafe import Markup

_LAYOUT = re.compile(r"\n[ \t]*")
_COMPACT = (".html.j2", ".svg.j2")


class _Loader(jinja2.PackageLoader):
    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool] | None]:
        source, filename, uptodate = super().get_source(environment, template)
        if template.endswith(_COMPACT):
            source = _LAYOUT.sub("", source)
        return source, filename, uptodate


def _escape(value: Any) -> Any:
    if hasattr(value, "__html__"):
        return value
    return Markup(_html.escape("" if value is None else str(value), quote=True))


def _env(**options: Any) -> jinja2.Environment:
    return jinja2.Environment(
        loader=_Loader("kubedra", "data/templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        auto_reload=False,
        **options,
    )


@functools.cache
def html() -> jinja2.Environment:
    return _env(autoescape=True, finalize=_escape)


@functools.cache
def markdown() -> jinja2.Environment:
    return _env(autoescape=False, trim_blocks=True, lstrip_blocks=True)
