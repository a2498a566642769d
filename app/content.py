"""Markdown deep-dives → HTML: front matter, server-side MathML, anchors, TOC, widget directives.

A content file is parsed once and kept until its mtime changes. Parsing turns the body into
a list of segments: HTML strings and widget calls. Widgets are rendered per request (their
data, e.g. a results table, may change without the Markdown changing), which is cheap:
the expensive part (Markdown and LaTeX) is what the cache keeps.
"""

from __future__ import annotations

import html
import logging
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import yaml
from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin

logger = logging.getLogger(__name__)

FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
REQUIRED_FIELDS = ("title", "authors", "venue", "year", "arxiv", "tldr", "tags", "order")
WIDGET_MARKER = "<!--papertrace-widget:{index}-->"
WIDGET_MARKER_PATTERN = re.compile(r"<!--papertrace-widget:(\d+)-->")
# `{{pointer.tsp | 50 | ours beam 8}}` in prose: one cell of a results table (the
# result-value widget), so a sentence quoting our numbers cannot drift from the tables.
INLINE_WIDGET = re.compile(r"\{\{([^{}]+)\}\}")
INLINE_WIDGET_NAME = "result-value"
MATHML_PREFIX = "{http://www.w3.org/1998/Math/MathML}"
LIMIT_SCRIPTS = {"msub": "munder", "msubsup": "munderover"}
ElementTree.register_namespace("", MATHML_PREFIX.strip("{}"))  # serialise as plain <math>
# latex2mathml passes unknown commands through as identifiers instead of failing.
UNKNOWN_LATEX_COMMAND = re.compile(r"<m[io]>\\([A-Za-z]+)</m[io]>")


class ContentError(ValueError):
    """A content file that cannot be served (missing or malformed front matter)."""


@dataclass(frozen=True)
class PaperMeta:
    title: str
    authors: list[str]
    venue: str
    year: int
    arxiv: str
    tldr: str
    tags: list[str]
    order: int
    bibtex: str = ""

    @property
    def arxiv_url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"


@dataclass(frozen=True)
class TocEntry:
    level: int
    anchor: str
    html: Markup


@dataclass(frozen=True)
class WidgetCall:
    """A ```widget block: `name` picks the partial, `params` are the other YAML keys."""

    name: str
    params: dict[str, Any]
    error: str | None = None
    source: str = ""
    inline: bool = False  # a `{{…}}` value inside a sentence, not a block of its own


@dataclass(frozen=True)
class Paper:
    slug: str
    path: Path
    mtime_ns: int
    meta: PaperMeta
    segments: tuple[str | WidgetCall, ...]
    toc: tuple[TocEntry, ...]

    @property
    def widgets(self) -> list[WidgetCall]:
        return [s for s in self.segments if isinstance(s, WidgetCall)]


WidgetRenderer = Callable[[WidgetCall], str]


def render_math(latex: str, display: bool) -> str:
    """LaTeX → MathML; on failure the source is shown in an error style, never raised."""
    try:
        mathml = latex_to_mathml(latex, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises many unrelated exception types
        return math_error(latex, display, f"{type(exc).__name__} {exc}".strip())
    unknown = UNKNOWN_LATEX_COMMAND.search(mathml)
    if unknown:
        return math_error(latex, display, f"unknown command \\{unknown.group(1)}")
    return _typeset_like_tex(mathml)


def _typeset_like_tex(mathml: str) -> str:
    """Two places where latex2mathml's output and TeX disagree, fixed on the server:
    - `\\min_k`, `\\operatorname*{argmax}_p`: named operators take their limits below in
      display math (munder + movablelimits, which Chromium sets as a subscript inline);
    - `\\setminus` comes out as U+29F5, which common math fonts lack; TeX prints U+2216."""
    root = ElementTree.fromstring(mathml)
    for element in root.iter():
        tag = element.tag.removeprefix(MATHML_PREFIX)
        if tag in LIMIT_SCRIPTS and len(element) and _is_named_operator(element[0]):
            element.tag = MATHML_PREFIX + LIMIT_SCRIPTS[tag]
            element[0].set("movablelimits", "true")
        elif tag == "mi" and element.text == "\u29f5":
            element.tag, element.text = MATHML_PREFIX + "mo", "\u2216"
    return ElementTree.tostring(root, encoding="unicode")


def _is_named_operator(element: ElementTree.Element) -> bool:
    text = element.text or ""
    return element.tag == MATHML_PREFIX + "mo" and len(text) > 1 and text.isalpha()


def math_error(latex: str, display: bool, reason: str) -> str:
    delimiter = "$$" if display else "$"
    return (
        f'<span class="math-error" role="note" title="LaTeX error: {html.escape(reason)}">'
        f"{delimiter}{html.escape(latex)}{delimiter}</span>"
    )


def slugify(title: str) -> str:
    """ASCII anchors, so links to sections stay readable: "The α-entmax family" →
    "the-alpha-entmax-family"."""
    spelled = "".join(_ascii_spelling(char) for char in title.lower())
    return re.sub(r"[^a-z0-9]+", "-", spelled).strip("-") or "section"


def _ascii_spelling(char: str) -> str:
    if char.isascii():
        return char
    name = unicodedata.name(char, "")
    if name.startswith("GREEK"):
        return f" {name.split()[-1].lower()} "
    # Accented letters keep their base letter; dashes and symbols separate words.
    return unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode() or " "


def _yaml_problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"line {exc.problem_mark.line + 1}: {exc.problem}"
    return str(exc)


def parse_widget_block(source: str) -> WidgetCall:
    try:
        data = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        message = f"The widget block is not valid YAML ({_yaml_problem(exc)})."
        return WidgetCall("", {}, message, source)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return WidgetCall("", {}, "The widget block needs a `name:` key.", source)
    params = {k: v for k, v in data.items() if k != "name"}
    return WidgetCall(data["name"], params, None, source)


def _make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "typographer": False})
    md.enable("table")
    md.use(footnote_plugin)
    md.use(
        anchors_plugin,
        min_level=2,
        max_level=3,
        slug_func=slugify,
        permalink=True,
        permalinkSymbol="#",
    )
    md.use(
        dollarmath_plugin,
        allow_labels=False,
        allow_space=True,
        allow_digits=False,
        renderer=lambda content, config: render_math(content, config["display_mode"]),
    )
    # `::: details One-line summary` … `:::` folds a long passage (a table, a derivation).
    md.use(container_plugin, "details", render=_render_details)
    md.inline.ruler.before("backticks", "inline_widget", _inline_widget)
    md.core.ruler.push("glue_math_punctuation", _glue_math_punctuation)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("inline_widget", _render_inline_widget)
    # Wide tables scroll inside the column instead of pushing the page sideways on phones.
    md.add_render_rule("table_open", lambda *args: '<div class="table-scroll">\n<table>\n')
    md.add_render_rule("table_close", lambda *args: "</table>\n</div>\n")
    return md


def _render_details(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.nesting != 1:
        return "</details>\n"
    summary = token.info.strip().removeprefix("details").strip() or "More"
    return f'<details class="fold">\n<summary>{html.escape(summary)}</summary>\n'


TRAILING_PUNCTUATION = re.compile(r"[:;,.!?)\]’”]+")


def _glue_math_punctuation(state: StateCore) -> None:
    """A line may not break between inline math and the punctuation right after it
    ("… $x$: the …" must not leave the colon alone at the start of a line)."""
    for block in state.tokens:
        children = block.children or []
        for index in range(len(children) - 1, 0, -1):
            math, after = children[index - 1], children[index]
            if math.type != "math_inline" or after.type != "text":
                continue
            match = TRAILING_PUNCTUATION.match(after.content)
            if match is None:
                continue
            glued = [Token("html_inline", "", 0), math, Token("text", "", 0)]
            glued[0].content = '<span class="math-glue">'
            glued[2].content = match.group()
            closing = Token("html_inline", "", 0)
            closing.content = "</span>"
            after.content = after.content[match.end() :]
            children[index - 1 : index] = [*glued, closing]


def _render_fence(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    if token.info.strip() != "widget":
        # a code block wider than a phone scrolls, so a keyboard must be able to reach it
        code = RendererHTML.fence(self, tokens, idx, options, env)
        return code.replace("<pre>", '<pre tabindex="0">', 1)
    widgets: list[WidgetCall] = env.setdefault("widgets", [])
    widgets.append(parse_widget_block(token.content))
    # html is disabled, so prose cannot forge this comment: every marker is ours.
    return WIDGET_MARKER.format(index=len(widgets) - 1) + "\n"


def _inline_widget(state: StateInline, silent: bool) -> bool:
    match = INLINE_WIDGET.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        # prose wraps lines, so a directive may span one: newlines are spaces here
        state.push("inline_widget", "", 0).content = " ".join(match.group(1).split())
    state.pos = match.end()
    return True


def _render_inline_widget(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    path = tokens[idx].content
    call = WidgetCall(INLINE_WIDGET_NAME, {"path": path}, None, f"{{{{{path}}}}}", inline=True)
    widgets: list[WidgetCall] = env.setdefault("widgets", [])
    widgets.append(call)
    return WIDGET_MARKER.format(index=len(widgets) - 1)


MARKDOWN = _make_markdown()


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    match = FRONT_MATTER.match(text)
    if not match:
        raise ContentError("no front matter: the file must start with a '---' YAML block")
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise ContentError(f"front matter is not valid YAML ({_yaml_problem(exc)})") from exc
    if not isinstance(data, dict):
        raise ContentError("front matter must be a YAML mapping")
    return data, text[match.end() :]


def parse_meta(data: Mapping[str, Any]) -> PaperMeta:
    missing = [key for key in REQUIRED_FIELDS if key not in data]
    if missing:
        raise ContentError(f"front matter lacks {', '.join(missing)}")
    authors, tags = data["authors"], data["tags"]
    if not isinstance(authors, list) or not isinstance(tags, list):
        raise ContentError("front matter `authors` and `tags` must be lists")
    try:
        year, order = int(data["year"]), int(data["order"])
    except (TypeError, ValueError) as exc:
        raise ContentError("front matter `year` and `order` must be integers") from exc
    return PaperMeta(
        title=str(data["title"]),
        authors=[str(a) for a in authors],
        venue=str(data["venue"]),
        year=year,
        arxiv=str(data["arxiv"]),
        tldr=str(data["tldr"]),
        tags=[str(t) for t in tags],
        order=order,
        bibtex=str(data.get("bibtex") or "").strip(),
    )


def _alignment_classes(tokens: list[Token]) -> None:
    """markdown-it aligns table cells with inline styles; a class keeps a strict CSP possible."""
    for token in tokens:
        style = token.attrGet("style") if token.type in ("th_open", "td_open") else None
        if isinstance(style, str) and style.startswith("text-align:"):
            token.attrs.pop("style")
            token.attrSet("class", f"align-{style.removeprefix('text-align:')}")


def _toc(tokens: list[Token]) -> tuple[TocEntry, ...]:
    entries = []
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or token.tag not in ("h2", "h3"):
            continue
        inline = tokens[i + 1]
        # The permalink the anchors plugin appends is not part of the title.
        children = _strip_permalink(inline.children or [])
        text = MARKDOWN.renderer.renderInline(children, MARKDOWN.options, {}).strip()
        entries.append(TocEntry(int(token.tag[1]), str(token.attrGet("id")), Markup(text)))
    return tuple(entries)


def _strip_permalink(children: list[Token]) -> list[Token]:
    """Drop the `<a class="header-anchor">#</a>` tokens (and the space before them)."""
    for start, child in enumerate(children):
        if child.type == "link_open" and child.attrGet("class") == "header-anchor":
            kept = children[:start]
            if kept and kept[-1].type == "text" and not kept[-1].content.strip():
                kept = kept[:-1]
            return kept
    return children


def render_markdown(body: str) -> tuple[tuple[str | WidgetCall, ...], tuple[TocEntry, ...]]:
    env: dict[str, Any] = {}
    tokens = MARKDOWN.parse(body, env)
    _alignment_classes(tokens)
    rendered = MARKDOWN.renderer.render(tokens, MARKDOWN.options, env)
    widgets: list[WidgetCall] = env.get("widgets", [])
    segments: list[str | WidgetCall] = []
    position = 0
    for match in WIDGET_MARKER_PATTERN.finditer(rendered):
        segments.append(rendered[position : match.start()])
        segments.append(widgets[int(match.group(1))])
        position = match.end()
    segments.append(rendered[position:])
    return tuple(s for s in segments if s != ""), _toc(tokens)


def parse_paper(path: Path) -> Paper:
    """Read and render one content file; raises ContentError if its front matter is bad."""
    text = path.read_text(encoding="utf-8")
    data, body = split_front_matter(text)
    meta = parse_meta(data)
    segments, toc = render_markdown(body)
    return Paper(path.stem, path, path.stat().st_mtime_ns, meta, segments, toc)


def render_body(paper: Paper, render_widget: WidgetRenderer) -> Markup:
    parts = [s if isinstance(s, str) else render_widget(s) for s in paper.segments]
    return Markup("".join(parts))


@dataclass
class ContentLibrary:
    """The papers in one folder, each re-parsed only when its file's mtime changes."""

    directory: Path
    _cache: dict[str, Paper] = field(default_factory=dict)
    _broken: dict[str, int] = field(default_factory=dict)

    def load(self) -> None:
        """Parse every file now, so broken ones are reported at start-up."""
        for path in self._files():
            self._get_path(path)

    def papers(self, tag: str | None = None) -> list[Paper]:
        papers = [p for p in map(self._get_path, self._files()) if p is not None]
        if tag:
            papers = [p for p in papers if tag in p.meta.tags]
        return sorted(papers, key=lambda p: (p.meta.order, p.slug))

    def tags(self) -> list[str]:
        return sorted({t for p in self.papers() for t in p.meta.tags})

    def get(self, slug: str) -> Paper | None:
        # bounded: a name past the file system's limit (255 bytes) would raise, not miss
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,99}", slug):
            return None
        return self._get_path(self.directory / f"{slug}.md")

    def _files(self) -> Iterator[Path]:
        if self.directory.is_dir():
            yield from sorted(self.directory.glob("*.md"))

    def _get_path(self, path: Path) -> Paper | None:
        try:
            mtime_ns = path.stat().st_mtime_ns
        except FileNotFoundError:
            self._cache.pop(path.stem, None)
            return None
        cached = self._cache.get(path.stem)
        if cached is not None and cached.mtime_ns == mtime_ns:
            return cached
        if self._broken.get(path.stem) == mtime_ns:
            return None
        try:
            paper = parse_paper(path)
        except ContentError as exc:
            logger.error("skipping %s: %s", path, exc)
            self._broken[path.stem] = mtime_ns
            self._cache.pop(path.stem, None)
            return None
        self._broken.pop(path.stem, None)
        self._cache[path.stem] = paper
        return paper
