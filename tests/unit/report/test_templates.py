"""The reports' Jinja2 templates (data/templates/): they parse, they escape the way the reports always did, and
a missing value is an error, not an empty cell."""

from __future__ import annotations

import re
from importlib import resources

import jinja2
import pytest

from kubedra.report import html as h
from kubedra.report import templating

TEMPLATES = sorted(
    p.name for p in resources.files("kubedra.data").joinpath("templates").iterdir() if p.name.endswith(".j2")
)


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_parses(name: str) -> None:
    env = templating.markdown() if name.endswith(".md.j2") else h.template("page.html.j2").environment
    env.get_template(name)


def test_html_values_are_escaped_as_html_escape_does() -> None:
    """html.escape(quote=True): &quot; and &#x27; (MarkupSafe alone would write &#34; and &#39;)."""
    cell = h.table(("a",), [("<b> \"x\" & 'y'",)], filterable=False)
    assert "<td>&lt;b&gt; &quot;x&quot; &amp; &#x27;y&#x27;</td>" in cell
    assert h.table(("a",), [(None,)]).count("<td></td>") == 1


@pytest.mark.parametrize("name", [n for n in TEMPLATES if not n.endswith(".md.j2")])
def test_html_templates_do_not_escape_with_markupsafe_filters(name: str) -> None:
    """|join, |e, |escape and |forceescape escape with MarkupSafe's entities, not the reports' ones."""
    text = resources.files("kubedra.data").joinpath(f"templates/{name}").read_text(encoding="utf-8")
    assert not re.search(r"\|\s*(join|e|escape|forceescape)\b", text)


def test_a_missing_value_is_an_error() -> None:
    env = templating.markdown()
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ nothing }}").render()
