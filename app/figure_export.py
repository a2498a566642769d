"""Take a live figure away: its link, a citation, a script that prints the same answer, and the
server's own drawing as a self-contained SVG or a PNG.

Every live figure renders a take-away block (templates/partials/widgets/take-away.html) from a
`Takeaway`, made by its family from the figure's validated request, the answer's checkpoint
and the page it is on (`FigurePage`: from the request's own address on a page render, from
htmx's `HX-Current-URL` on a fragment). The block is redrawn with every answer, so what it
offers is always the figure on screen.

- link: the page address of the figure's state, ending in the figure's `#id`;
- cite: the paper's BibTeX and a `@misc` entry for the figure (model, sha256, link);
- snippet: Python that loads the same checkpoint with this repository's code (a family's
  `run` with `app.registry.local_models`) and prints the answer the API gives
  (tests/test_figure_export.py runs each one);
- svg / png: the family's export route, which draws the figure with the page's stylesheet
  resolved into the SVG (`standalone_style`: no variables, no page styles needed) and adds the
  legend and a caption naming the paper, the checkpoint and its sha256, and the link; the PNG
  is that SVG rendered on the server by resvg (no browser in the request path).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from fastapi import Request
from fastapi.responses import Response
from markupsafe import Markup
from pydantic import BaseModel

from app.compute import Budget, compute_budget
from app.responses import page_url

STATIC = Path(__file__).resolve().parent.parent / "static"
PAPER_PATH = re.compile(r"/papers/([a-z0-9-]+)/?$")
CITE_KEY = re.compile(r"@\w+\{([^,\s]+),")


@dataclass(frozen=True)
class FigurePage:
    """The page a figure is drawn on: its address (absolute, with the current query) and the
    paper's citation."""

    url: str
    slug: str
    title: str
    year: int | str
    bibtex: str


def figure_page(request: Request, url: str | None = None) -> FigurePage | None:
    """The page of a figure's request: `url` (a page render's own), else htmx's
    `HX-Current-URL`; None when it is no paper page of this site's library."""
    url = url or request.headers.get("HX-Current-URL")
    if not url:
        return None
    match = PAPER_PATH.search(urlsplit(url).path)
    paper = request.app.state.library.get(match[1]) if match else None
    if paper is None:
        return None
    meta = paper.meta
    return FigurePage(url, paper.slug, meta.title, meta.year, meta.bibtex)


@dataclass(frozen=True)
class Takeaway:
    """A figure's take-away block: its link, its citation, the script that prints its answer,
    and where its SVG and PNG files are (None for a figure drawn without one)."""

    link: str
    cite: str
    snippet: str
    svg: str | None = None
    png: str | None = None


def takeaway(
    page: FigurePage | None,
    figure_id: str,
    url_state: dict[str, str | None],
    what: str,
    model: Any,
    snippet: str,
    export: str | None = None,
) -> Takeaway | None:
    """The take-away block of figure `figure_id` showing `what` (a phrase: "the convex hull
    decoded greedily over 10 points") from checkpoint `model` (name, sha256), whose state is
    `url_state` (the page address's keys; None removes one); `export` is the family's export
    route and the state's query (`export_route`), to which ".svg"/".png" are added. None off a
    paper page."""
    if page is None:
        return None
    # the page's path with this figure's state, as respond's HX-Replace-Url makes it: no scheme
    # or host (never taken from a request's Host header), no other figure's keys, so a page's
    # default figure renders the same for every reader and caches (app.widgets); the script
    # makes it absolute where it is copied, the exported caption from the download's page
    path = urlsplit(page.url).path
    link = (page_url(path, url_state) or path) + f"#{figure_id}"
    return Takeaway(
        link=link,
        cite=citation(page, figure_id, what, model, link),
        snippet=snippet,
        svg=export and export.replace("?", ".svg?", 1),
        png=export and export.replace("?", ".png?", 1),
    )


def export_route(path: str, fields: Mapping[str, str | list[str] | None]) -> str:
    """A family's export route with a figure's state as its query (keys without the page
    address's prefix; None left out, a list as the key repeated)."""
    kept = {key: value for key, value in fields.items() if value is not None}
    return f"{path}?{urlencode(kept, safe=',;', doseq=True)}"


def credits(page: FigurePage | None, made: Takeaway | None, by: str) -> list[str]:
    """An exported figure's last caption lines: the paper, who drew it (`by`: "Model …,
    sha256 …"), and the figure's absolute link on the page it was downloaded from."""
    source = f"{page.title} ({page.year}), PaperTrace" if page is not None else "PaperTrace"
    lines = [f"{source}. {by}."]
    if page is not None and made is not None:
        parts = urlsplit(page.url)
        lines.append(f"{parts.scheme}://{parts.netloc}{made.link}" if parts.netloc else made.link)
    return lines


def citation(page: FigurePage, figure_id: str, what: str, model: Any, link: str) -> str:
    """The paper's BibTeX and an entry for the figure that cites it."""
    key = CITE_KEY.search(page.bibtex)
    cites = f"; a figure for \\cite{{{key[1]}}}" if key else ""
    entry = (
        f"@misc{{papertrace-{page.slug}-{figure_id},\n"
        f"  title        = {{{{{page.title}}}: {what}}},\n"
        f"  howpublished = {{PaperTrace, \\url{{{link}}}}},\n"
        f"  note         = {{{made_by(model)}{cites}}}\n"
        "}"
    )
    return f"{page.bibtex.strip()}\n\n{entry}" if page.bibtex else entry


def made_by(model: Any) -> str:
    """Who drew a figure: its checkpoint and sha256, or α-entmax itself (no model)."""
    if model is None:
        return "Computed by α-entmax (models.entmax), no trained model"
    return f"Model {model.name}, sha256 {model.sha256}"


def py(value: Any) -> str:
    """A Python literal for a JSON-like value: lists (and tuples, as lists), numbers, strings,
    None and booleans."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(py(item) for item in value) + "]"
    return repr(value)


def script(imports: list[str], lines: list[str], models: bool = True) -> str:
    """A snippet run from the repository's root: its imports, then its `lines` (which call the
    family's code, with `local_models()` when `models`, and print the answer)."""
    return "\n".join(
        [
            "# From the root of a PaperTrace checkout, after `make .venv/.dev-installed`:",
            "#   .venv/bin/python this_file.py",
            *imports,
            *(["from app.registry import local_models"] if models else []),
            "",
            *lines,
            "",
        ]
    )


# ---- the drawing, self-contained ----

VARIABLE = re.compile(r"var\((--[\w-]+)\)")
COLOR_MIX = re.compile(r"color-mix\(in srgb, (#[0-9a-fA-F]{6}) (\d+)%, transparent\)")
DECLARATION = re.compile(r"(--[\w-]+)\s*:\s*([^;]+);")
RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
# selectors of a pointer's or keyboard's state, which a file never has
STATE = re.compile(r":(hover|focus|focus-visible|focus-within|active|visited)\b")
# properties that place or animate the figure in the page, not what it draws
PAGE_ONLY = frozenset(
    "cursor transition touch-action outline width height max-height max-width user-select "
    "-webkit-user-select".split()
)


def _variables(css: str) -> dict[str, str]:
    """The custom properties declared in `css`'s top-level rules, the light theme's (media
    blocks, e.g. dark mode, are skipped: an exported figure is drawn light)."""
    found: dict[str, str] = {}
    for _selector, body in RULE.findall(_top_level(css)):
        for name, value in DECLARATION.findall(body):
            found[name] = value.strip()
    return found


def _top_level(css: str) -> str:
    """`css` without comments and @media/@supports blocks."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, depth, block_depth = [], 0, None
    i = 0
    while i < len(css):
        if block_depth is None and css.startswith("@", i):
            block_depth = depth
        char = css[i]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if block_depth is not None and depth == block_depth:
                block_depth = None
                i += 1
                continue
        if block_depth is None:
            out.append(char)
        i += 1
    return "".join(out)


def _resolve(value: str, variables: dict[str, str]) -> str:
    for _ in range(8):  # variables that name variables
        value = VARIABLE.sub(lambda m: variables.get(m[1], "currentColor"), value)
    return COLOR_MIX.sub(
        lambda m: (
            f"rgba({int(m[1][1:3], 16)}, {int(m[1][3:5], 16)}, "
            f"{int(m[1][5:7], 16)}, {int(m[2]) / 100:g})"
        ),
        value,
    )


@cache
def site_variable(name: str) -> str:
    """A colour (or other value) of the site's light theme, from static/css/site.css."""
    return _variables((STATIC / "css/site.css").read_text())[name]


@cache
def standalone_style(css_file: str, prefix: str) -> str:
    """The rules of static/`css_file` for the classes starting with `prefix` (what the figure's
    SVG uses), with the site's variables put in: a stylesheet an SVG carries inside itself.
    State selectors (:hover, :focus) and media blocks are left out."""
    variables = _variables((STATIC / "css/site.css").read_text())
    css = _top_level((STATIC / css_file).read_text())
    variables |= _variables(css)
    rules = []
    for selector, body in RULE.findall(css):
        kept = [
            s.strip()
            for s in selector.split(",")
            if s.strip().startswith(prefix) and not STATE.search(s)
        ]
        declarations = [
            f"{name.strip()}: {_resolve(value.strip(), variables)}"
            for name, value in (d.split(":", 1) for d in body.split(";") if ":" in d)
            if not name.strip().startswith("--") and name.strip() not in PAGE_ONLY
        ]
        if kept and declarations:
            rules.append(f"{', '.join(kept)} {{ {'; '.join(declarations)} }}")
    return "\n".join(rules)


@dataclass(frozen=True)
class Panel:
    """One drawing of a figure: the family's own SVG markup, drawn `width` × `height`."""

    svg: str
    width: float
    height: float
    heading: str | None = None


@dataclass(frozen=True)
class Legend:
    """A legend entry: a sample `shape` ("line", "dot" or "box") drawn with class `mark`
    inside a group of class `group` (for the stylesheet's descendant rules)."""

    mark: str
    text: str
    shape: str = "line"
    group: str = ""


def document(
    templates: Any, style: str, panels: list[Panel], legend: list[Legend], caption: list[str]
) -> str:
    """The self-contained SVG of a figure: its panels one under the other, then the legend
    (as many entries a row as fit, at most three) and the caption (lines broken to fit)."""
    width = max(400.0, *(panel.width for panel in panels))
    placed, y = [], 0.0
    for panel in panels:
        y += 22 if panel.heading else 0
        svg = Markup(panel.svg)  # noqa: S704 (rendered by the family's autoescaped partial)
        placed.append({**panel.__dict__, "svg": svg, "x": (width - panel.width) / 2, "y": y})
        y += panel.height + 8
    longest = max((len(entry.text) for entry in legend), default=0)
    per_row = max(1, min(3, int((width - 48) // (26 + 5.8 * longest + 12))))
    column = (width - 48) / per_row
    entries = [
        {**entry.__dict__, "x": 24 + (i % per_row) * column, "y": y + 14 + 18 * (i // per_row)}
        for i, entry in enumerate(legend)
    ]
    y += 18 * -(-len(legend) // per_row) + 20
    characters = int((width - 48) / 5.6)
    lines = [wrapped for text in caption for wrapped in caption_lines(text, characters)]
    texts = [{"text": text, "y": y + 14 * i} for i, text in enumerate(lines)]
    height = y + 14 * len(lines) + 10
    # .xml: autoescaped, so a caption's "&" stays well-formed; the panels are markup already
    template = templates.get_template("partials/widgets/figure-export.xml")
    return template.render(
        width=round(width),
        height=round(height),
        style=style,
        panels=placed,
        legend=entries,
        caption=texts,
    )


def caption_lines(text: str, width: int) -> list[str]:
    """`text` broken at spaces (or anywhere, for a long address) into lines of ≤ `width`."""
    lines: list[str] = []
    for word in text.split(" "):
        while len(word) > width:
            lines.append(word[:width])
            word = word[width:]
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


Draw = Callable[[Any, "FigurePage | None"], str]  # (templates, page) -> the figure's SVG


def exported(request: Request, kind: str, filename: str, draw: Draw) -> Response:
    """An export route's answer: `draw`n for the page the download was asked from (its
    Referer), as the SVG file or that SVG rendered as PNG."""
    page = figure_page(request, request.headers.get("Referer"))
    svg = draw(request.app.state.templates.env, page)
    return png_response(svg, filename) if kind == "png" else svg_response(svg, filename)


def svg_response(svg: str, filename: str) -> Response:
    return Response(
        svg,
        media_type="image/svg+xml",
        headers={"Content-Disposition": f'attachment; filename="{filename}.svg"'},
    )


MAX_PNG_PIXELS = 2_500_000  # a tall figure (512 bars, compared heatmaps) is drawn smaller
# Rasterising up to MAX_PNG_PIXELS takes 0.2-0.9 s of one core (bench/prices.py, export).
PNG_TOKENS = 16


def export_budget(schema: type[BaseModel]) -> Callable[[Request], AsyncIterator[Budget]]:
    """The compute budget of an export route: its figure's price (app.compute.compute_budget)
    and PNG_TOKENS more when it is drawn as PNG."""
    return compute_budget(
        schema,
        "query",
        extra=lambda request: PNG_TOKENS if request.path_params.get("kind") == "png" else 0,
    )


def png_response(svg: str, filename: str) -> Response:
    """The SVG rendered to PNG on the server at twice its size (less for a figure that would
    pass MAX_PNG_PIXELS), on white."""
    import resvg_py

    size = re.search(r'width="([\d.]+)" height="([\d.]+)"', svg)
    area = float(size[1]) * float(size[2]) if size else 1.0
    zoom = min(2.0, (MAX_PNG_PIXELS / area) ** 0.5)
    png = resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff", zoom=zoom)
    return Response(
        bytes(png),
        media_type="image/png",
        headers={"Content-Disposition": f'attachment; filename="{filename}.png"'},
    )
