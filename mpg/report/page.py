"""The report as one HTML file that opens without a network: Vega, Vega-Lite and vega-embed
inlined (the bundle `vl-convert-python` ships, as Altair's own inline template uses), the specs in
one JSON block, and a few lines of script that hand each spec to `vegaEmbed`.

Altair's `chart.save(inline=True)` writes its spec into a script as raw JSON, so a job named
`</script><script>...` would end the script and run its own (docs/report.md). Here every
string from the data reaches the page inside that JSON block with `<`, `>` and `&` escaped as
`\\u003c`, `\\u003e`, `\\u0026`: nothing in it can close the block, and JSON.parse gives the text
back to Vega, which draws it as text. As a second fence, the page's Content-Security-Policy runs
only the two scripts it names by hash and lets the page fetch nothing.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import cache

import altair as alt
import vl_convert

from mpg.report.blocks import Block, Chart, Facts, Figures, Note, Section, Table

# Vega compiles its expressions with `new Function`, hence 'unsafe-eval'.
_CSP = (
    "default-src 'none'; script-src {hashes} 'unsafe-eval'; style-src 'unsafe-inline'; "
    "img-src data:"
)

# Embeds every spec of the JSON block into the element of the same id; when all have rendered,
# sets <body data-rendered="N"> (the browser test waits on it).
_BOOT = """
const specs = JSON.parse(document.getElementById("mpg-specs").textContent);
window.mpgViews = {};
Promise.all(Object.entries(specs).map(
  ([id, spec]) => vegaEmbed(document.getElementById(id), spec, {renderer: "svg", actions: false})
    .then((result) => { window.mpgViews[id] = result.view; })
)).then((views) => { document.body.dataset.rendered = String(views.length); });
"""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1360px;
  padding: 0 12px; color: #222; }
nav { font-size: 0.9em; margin: 0.5em 0 1.5em; line-height: 1.8; }
nav a { margin-right: 1.1em; color: #2a5d9f; text-decoration: none; white-space: nowrap; }
nav a.absent { color: #999; }
section { margin: 2.2em 0; border-top: 1px solid #e3e3e3; padding-top: 0.4em; }
h2 { margin: 0.4em 0 0.2em; }
h3 { margin: 0.2em 0; font-size: 1.02em; }
p.intro, p.caption { color: #555; margin: 0.2em 0 0.8em; max-width: 1100px; }
.blocks { display: flex; flex-wrap: wrap; gap: 1.2em 2.5em; align-items: flex-start; }
figure { margin: 0; width: min-content; }
figure.wide { flex-basis: 100%; width: auto; }
p.opening { font-size: 1.1em; max-width: 1100px; margin: 0.3em 0; }
p.reconcile, p.lost { background: #f6f7f9; border-left: 4px solid #5f6b77; padding: 0.6em 0.9em;
  max-width: 1100px; margin: 0.3em 0; }
p.absent { color: #777; font-style: italic; margin: 0; }
p.flag { background: #fdecea; border-left: 4px solid #d62728; padding: 0.6em 0.9em;
  max-width: 1100px; margin: 0.3em 0; }
.figures { display: flex; flex-wrap: wrap; gap: 0.8em; margin: 0.6em 0; width: 100%; }
.figure { flex: 0 0 auto; min-width: 9.5em; border: 1px solid #ddd; border-radius: 6px;
  padding: 0.5em 0.9em; }
.figure .label { color: #555; font-size: 0.85em; }
.figure .value { font-size: 1.5em; font-weight: 600; white-space: nowrap; }
.figure .note { color: #777; font-size: 0.8em; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.25em 1.2em; margin: 0; }
dt { color: #555; } dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; font-size: 0.9em; }
caption { text-align: left; color: #555; padding-bottom: 0.4em; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 0.25em 0.7em; text-align: left;
  vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
td { max-width: 420px; overflow-wrap: anywhere; }
"""


@cache
def _vega_bundle() -> str:
    """Vega, Vega-Lite (the version Altair writes specs for) and vega-embed, as one script.

    vl-convert names Vega-Lite versions by major and minor: Altair's `v6.4.1` is its `v6_4`."""
    major, minor = alt.SCHEMA_VERSION.split(".")[:2]
    bundle = vl_convert.javascript_bundle(vl_version=f"{major}_{minor}")
    if "</script" in bundle.lower():
        raise AssertionError("the Vega bundle contains </script: it cannot be inlined")
    return bundle


def script_json(value: object) -> str:
    """JSON that is inert inside a <script> element: no `<`, `>` or `&` appears in it.

    >>> script_json({"job": "</script><b>&"})
    '{"job": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(value, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sha256(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return f"'sha256-{digest}'"


def _chart(chart: Chart) -> str:
    wide = ' class="wide"' if _is_wide(chart) else ""
    return (
        f"<figure{wide}><h3>{html.escape(chart.title)}</h3>"
        f'<p class="caption">{html.escape(chart.caption)}</p>'
        f'<div class="chart" id="{html.escape(chart.id)}"></div></figure>'
    )


def _is_wide(chart: Chart) -> bool:
    """A chart that fills the page's width starts a row of its own."""
    return chart.id not in _SIDE_BY_SIDE


# Charts drawn beside the next one where the window is wide enough.
_SIDE_BY_SIDE = frozenset({"waterfall", "losses", "quarantine"})


def _table(table: Table) -> str:
    def cell(tag: str, column: str, text: str) -> str:
        numeric = ' class="num"' if column in table.numeric else ""
        return f"<{tag}{numeric}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", c, c) for c in table.columns)
    body = "".join(
        "<tr>"
        + "".join(cell("td", c, v) for c, v in zip(table.columns, row, strict=True))
        + "</tr>"
        for row in table.rows
    )
    return (
        f"<table><caption>{html.escape(table.caption)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def _block(block: Block) -> str:
    """One block as HTML, every string in it escaped."""
    match block:
        case Chart():
            return _chart(block)
        case Table():
            return _table(block)
        case Facts(items):
            terms = "".join(
                f"<dt>{html.escape(term)}</dt><dd>{html.escape(value)}</dd>"
                for term, value in items
            )
            return f"<dl>{terms}</dl>"
        case Figures(figures):
            tiles = "".join(
                f'<div class="figure"><div class="label">{html.escape(f.label)}</div>'
                f'<div class="value">{html.escape(f.value)}</div>'
                f'<div class="note">{html.escape(f.note)}</div></div>'
                for f in figures
            )
            return f'<div class="figures">{tiles}</div>'
        case Note(text, kind):
            return f'<p class="{html.escape(kind)}">{html.escape(text)}</p>'
    raise TypeError(f"not a block of the report: {block!r}")


def _section(section: Section) -> str:
    intro = f'<p class="intro">{html.escape(section.intro)}</p>' if section.intro else ""
    blocks = "\n".join(_block(b) for b in section.blocks)
    return (
        f'<section id="{html.escape(section.id)}"><h2>{html.escape(section.title)}</h2>{intro}'
        f'<div class="blocks">{blocks}</div></section>'
    )


_ABSENT = ' class="absent"'


def _nav(sections: list[Section]) -> str:
    links = " ".join(
        f'<a href="#{html.escape(s.id)}"{_ABSENT if s.absent else ""}>{html.escape(s.title)}</a>'
        for s in sections
    )
    return f"<nav>{links}</nav>"


def render_page(title: str, sections: list[Section]) -> str:
    """The whole page: a contents line, then each section; every string of it is escaped as
    HTML, and the charts' specs go into the one inert JSON block."""
    bundle = _vega_bundle()
    charts = [chart for section in sections for chart in section.charts]
    ids = [chart.id for chart in charts] + [section.id for section in sections]
    if len(set(ids)) != len(ids):
        raise AssertionError(f"two elements of the report share an id: {ids}")
    specs = script_json({chart.id: chart.spec for chart in charts})
    csp = _CSP.format(hashes=f"{_sha256(bundle)} {_sha256(_BOOT)}")
    body = "\n".join(_section(s) for s in sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{html.escape(csp)}">
<title>{html.escape(title)}</title>
<style>{_STYLE}</style>
<script>{bundle}</script>
</head>
<body>
<h1>{html.escape(title)}</h1>
{_nav(sections)}
{body}
<script type="application/json" id="mpg-specs">{specs}</script>
<script>{_BOOT}</script>
</body>
</html>
"""
