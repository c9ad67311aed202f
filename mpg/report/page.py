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

from mpg.report.charts import Chart

# Vega compiles its expressions with `new Function`, hence 'unsafe-eval'.
_CSP = (
    "default-src 'none'; script-src {hashes} 'unsafe-eval'; style-src 'unsafe-inline'; "
    "img-src data:"
)

# Embeds every spec of the JSON block into the element of the same id; when all have rendered,
# sets <body data-rendered="N"> (the browser test waits on it).
_BOOT = """
const specs = JSON.parse(document.getElementById("mpg-specs").textContent);
Promise.all(Object.entries(specs).map(
  ([id, spec]) => vegaEmbed(document.getElementById(id), spec, {renderer: "svg", actions: false})
)).then((views) => { document.body.dataset.rendered = String(views.length); });
"""

_STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
section { margin: 2.5em 0; }
p.caption { color: #555; margin: 0.2em 0 0.8em; }
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


def render_page(title: str, opening: str, charts: list[Chart]) -> str:
    """The whole page; `title`, the `opening` paragraph and the charts' headings and captions are
    escaped as HTML."""
    bundle = _vega_bundle()
    specs = script_json({chart.id: chart.spec for chart in charts})
    sections = "\n".join(
        f'<section><h2>{html.escape(c.title)}</h2><p class="caption">{html.escape(c.caption)}'
        f'</p><div class="chart" id="{html.escape(c.id)}"></div></section>'
        for c in charts
    )
    csp = _CSP.format(hashes=f"{_sha256(bundle)} {_sha256(_BOOT)}")
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
<p class="opening">{html.escape(opening)}</p>
{sections}
<script type="application/json" id="mpg-specs">{specs}</script>
<script>{_BOOT}</script>
</body>
</html>
"""
