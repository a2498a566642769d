"""Markdown → HTML: front matter, MathML, TOC, widget directives, escaping, the per-file cache."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import yaml

from app import content
from app.content import (
    ContentError,
    ContentLibrary,
    WidgetCall,
    parse_paper,
    render_body,
    render_markdown,
    render_math,
    split_front_matter,
)
from tests.conftest import FIXTURE_CONTENT

FRONT_MATTER = """---
title: A Paper
authors: [A. Author, B. Author]
venue: ICLR
year: 2019
arxiv: "1905.05702"
tldr: One line.
tags: [sparsity]
order: 3
bibtex: |
  @article{a2019, title={A Paper}}
---
"""


@pytest.fixture(autouse=True)
def fresh_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test renders with a parser built now, not the one built at import: what is tested
    is the dialect `_make_markdown` configures (mutation tests change it per test run)."""
    monkeypatch.setattr(content, "MARKDOWN", content._make_markdown())


def html_of(markdown: str) -> str:
    segments, _ = render_markdown(markdown)
    return "".join(s for s in segments if isinstance(s, str))


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_front_matter_fields_are_parsed(tmp_path: Path) -> None:
    paper = parse_paper(write(tmp_path / "a-paper.md", FRONT_MATTER + "Body.\n"))
    meta = paper.meta
    assert paper.slug == "a-paper"
    assert meta.title == "A Paper"
    assert meta.authors == ["A. Author", "B. Author"]
    assert (meta.venue, meta.year, meta.order) == ("ICLR", 2019, 3)
    assert meta.arxiv_url == "https://arxiv.org/abs/1905.05702"
    assert meta.tags == ["sparsity"]
    assert meta.bibtex == "@article{a2019, title={A Paper}}"
    assert "<p>Body.</p>" in render_body(paper, lambda call: "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "No front matter at all.\n",
            "no front matter: the file must start with a '---' YAML block",
        ),
        (
            "---\ntitle: [unclosed\n---\n",
            "front matter is not valid YAML (line 1: expected ',' or ']', but got '<stream end>')",
        ),
        ("---\n- a list\n---\n", "front matter must be a YAML mapping"),
        (
            "---\ntitle: Only a title\n---\n",
            "front matter lacks authors, venue, year, arxiv, tldr, tags, order",
        ),
        (
            FRONT_MATTER.replace("year: 2019", "year: soon"),
            "front matter `year` and `order` must be integers",
        ),
        (
            FRONT_MATTER.replace("tags: [sparsity]", "tags: sparsity"),
            "front matter `authors` and `tags` must be lists",
        ),
    ],
)
def test_bad_front_matter_is_a_content_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ContentError) as caught:
        parse_paper(write(tmp_path / "bad.md", text))
    assert str(caught.value) == message


def test_front_matter_split_keeps_the_body() -> None:
    data, body = split_front_matter(FRONT_MATTER + "## Heading\n")
    assert data["title"] == "A Paper"
    assert body == "## Heading\n"


def test_inline_and_display_math_become_mathml() -> None:
    html = html_of("Score $u_j = v^\\top \\tanh(x)$ here.\n\n$$\n\\sum_i p_i = 1\n$$\n")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in html
    assert '<div class="math block">' in html
    assert 'display="block"' in html
    assert "<msub><mi>u</mi><mi>j</mi></msub>" in html
    assert "$" not in html


def test_bad_latex_shows_its_source_in_an_error_style() -> None:
    html = html_of("Broken: $x^$ and fine: $y$.\n")
    assert '<span class="math-error"' in html
    assert "$x^$" in html
    assert "<mi>y</mi>" in html


def test_unknown_latex_command_is_an_error_not_an_identifier() -> None:
    html = render_math(r"\notacommand{x}", display=False)
    assert 'class="math-error"' in html
    assert "unknown command \\notacommand" in html


def test_math_error_escapes_the_source() -> None:
    html = render_math("<script> x^", display=True)
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_raw_html_is_escaped() -> None:
    html = html_of('Hello <script>alert("x")</script> <img src=x onerror=alert(1)>\n')
    assert "<script>" not in html
    assert "<img" not in html
    assert "&lt;script&gt;" in html


def test_tables_footnotes_and_code_render() -> None:
    html = html_of(
        "| a | b |\n|---|--:|\n| 1 | 2 |\n\nClaim.[^n]\n\n[^n]: Note.\n\n```python\nx = 1\n```\n"
    )
    assert '<div class="table-scroll">\n<table>' in html
    assert '<td class="align-right">2</td>' in html
    assert "style=" not in html  # alignment is a class, so a strict CSP stays possible
    assert 'class="footnote-ref"' in html
    assert '<pre tabindex="0"><code class="language-python">x = 1' in html


def test_a_details_block_folds_its_passage_widgets_included() -> None:
    segments, _ = render_markdown(
        "::: details The long table\n\n| a |\n|---|\n| 1 |\n\n```widget\nname: x\n```\n\n:::\n"
    )
    assert segments[0].startswith('<details class="fold">\n<summary>The long table</summary>')
    assert isinstance(segments[1], WidgetCall) and segments[1].name == "x"
    assert segments[2].strip() == "</details>"


def test_toc_comes_from_h2_and_h3_with_anchors() -> None:
    markdown = "# Title\n\n## First part\n\n### Detail $x$\n\n#### Too deep\n\n## Again\n"
    _, toc = render_markdown(markdown)
    assert [(e.level, e.anchor) for e in toc] == [(2, "first-part"), (3, "detail"), (2, "again")]
    assert toc[0].html == "First part"
    assert "<math" in toc[1].html
    assert "header-anchor" not in toc[1].html


def test_headings_get_ids_and_unique_slugs() -> None:
    html = html_of("## Results\n\n## Results\n")
    assert '<h2 id="results">' in html
    assert '<h2 id="results-1">' in html


def test_widget_directive_becomes_a_widget_call() -> None:
    segments, _ = render_markdown(
        "Before.\n\n```widget\nname: results-table\nsource: pointer\ntable: hull\n```\n\nAfter.\n"
    )
    calls = [s for s in segments if isinstance(s, WidgetCall)]
    assert calls == [
        WidgetCall(
            "results-table",
            {"source": "pointer", "table": "hull"},
            None,
            "name: results-table\nsource: pointer\ntable: hull\n",
        )
    ]
    assert "Before." in segments[0] and "After." in segments[-1]


@pytest.mark.parametrize(
    ("block", "message"),
    [("name: [unclosed\n", "not valid YAML"), ("source: pointer\n", "needs a `name:` key")],
)
def test_malformed_widget_block_carries_an_error(block: str, message: str) -> None:
    segments, _ = render_markdown(f"```widget\n{block}```\n")
    (call,) = [s for s in segments if isinstance(s, WidgetCall)]
    assert call.error is not None and message in call.error


def test_prose_cannot_forge_a_widget_marker() -> None:
    segments, _ = render_markdown("Text <!--papertrace-widget:0--> more.\n")
    assert not [s for s in segments if isinstance(s, WidgetCall)]


def test_inline_value_becomes_an_inline_widget_call_inside_its_sentence() -> None:
    segments, _ = render_markdown("Ours: {{pointer.tsp | 50 |\nours beam 8}}, the paper's 7.66.\n")
    assert segments == (
        "<p>Ours: ",
        WidgetCall(
            "result-value",
            {"path": "pointer.tsp | 50 | ours beam 8"},  # the line break is a space
            None,
            "{{pointer.tsp | 50 | ours beam 8}}",
            inline=True,
        ),
        ", the paper's 7.66.</p>\n",
    )


@pytest.mark.parametrize(
    "markdown",
    [
        "Code `{{a.b | c | d}}` stays code.\n",
        "Math $x_{{a}}$ stays math.\n",
        "An escaped \\{{a.b | c | d}} stays text.\n",
        "Unclosed {{a.b | c | d and {single} braces stay text.\n",
    ],
)
def test_braces_outside_a_value_directive_are_left_alone(markdown: str) -> None:
    segments, _ = render_markdown(markdown)
    assert not [s for s in segments if isinstance(s, WidgetCall)]


def test_render_body_places_each_widget_where_its_block_was() -> None:
    paper = parse_paper(FIXTURE_CONTENT / "alpha-paper.md")
    html = render_body(paper, lambda call: f"[{call.name}]")
    assert html.index('<h2 id="results"') < html.index("[results-table]")
    assert html.index("[results-table]") < html.index('<h2 id="broken-things"')
    assert html.count("[results-table]") == 3


def test_library_sorts_by_order_filters_by_tag_and_skips_broken_files(
    caplog: pytest.LogCaptureFixture,
) -> None:
    library = ContentLibrary(FIXTURE_CONTENT)
    with caplog.at_level(logging.ERROR):
        library.load()
    assert "broken-paper.md" in caplog.text
    assert [p.slug for p in library.papers()] == ["beta-paper", "alpha-paper"]
    assert [p.slug for p in library.papers(tag="attention")] == ["alpha-paper"]
    assert library.papers(tag="no-such-tag") == []
    assert library.tags() == ["attention", "pointers", "testing"]
    assert library.get("broken-paper") is None
    assert library.get("../alpha-paper") is None
    assert library.get("missing") is None


def test_library_caches_per_file_until_its_mtime_changes(fixture_content: Path) -> None:
    library = ContentLibrary(fixture_content)
    path = fixture_content / "beta-paper.md"
    first = library.get("beta-paper")
    assert first is not None
    assert library.get("beta-paper") is first

    write(path, path.read_text().replace("## Pointer scores", "## Pointer logits"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, first.mtime_ns + 1_000_000))
    second = library.get("beta-paper")
    assert second is not None and second is not first
    assert second.toc[0].anchor == "pointer-logits"

    path.unlink()
    assert library.get("beta-paper") is None


def test_a_fixed_broken_file_is_served_again(fixture_content: Path) -> None:
    library = ContentLibrary(fixture_content)
    assert library.get("broken-paper") is None
    write(fixture_content / "broken-paper.md", FRONT_MATTER + "Fixed.\n")
    path = fixture_content / "broken-paper.md"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    paper = library.get("broken-paper")
    assert paper is not None and paper.meta.title == "A Paper"


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("The α-entmax family", "the-alpha-entmax-family"),
        ("The threshold τ and how it is found", "the-threshold-tau-and-how-it-is-found"),
        ("Fenchel–Young losses", "fenchel-young-losses"),
        ("Café", "cafe"),
    ],
)
def test_heading_anchors_are_readable_ascii(title: str, slug: str) -> None:
    assert f'<h2 id="{slug}">' in html_of(f"## {title}\n")


def test_named_operators_take_limits_below_and_setminus_is_printable() -> None:
    html = render_math(r"\operatorname*{argmax}_{p} f(p) + \min_k S \setminus \{k\}", display=True)
    assert '<munder><mo movablelimits="true">argmax</mo>' in html
    assert '<munder><mo movablelimits="true">min</mo>' in html
    assert "<mo>\u2216</mo>" in html and "\u29f5" not in html


def test_comparison_signs_in_math_stay_escaped() -> None:
    html = render_math("a < b", display=False)
    assert "<mo>&lt;</mo>" in html


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("# Title\n", "<h1>Title</h1>"),  # the page's own title: no anchor
        ("#### Deep\n", "<h4>Deep</h4>"),  # below the table of contents: no anchor
        (
            "## Two\n",
            '<h2 id="two">Two <a class="header-anchor" href="#two">#</a></h2>',
        ),
        ("Pay $5 and $6 today.\n", "<p>Pay $5 and $6 today.</p>"),  # prices are not math
        ("The $ y $ here.\n", '<p>The <span class="math inline"><math'),  # spaced math is
        ("$$x$$ (eq1)\n", "(eq1)</p>"),  # no numbered-equation labels: the text stays
        ('"Quotes" -- and (c)\n', "<p>&quot;Quotes&quot; -- and (c)</p>"),  # no typographer
        ("| a |\n|---|\n| 1 |\n", '<div class="table-scroll">\n<table>\n<thead>'),
        ("| a |\n|---|\n| 1 |\n", "</tbody>\n</table>\n</div>"),
        ("```\ncode\n```\n", '<pre tabindex="0"><code>code\n</code></pre>'),
        ("::: details\nText\n:::\n", '<details class="fold">\n<summary>More</summary>'),
        ("Hi <b>x</b>\n", "<p>Hi &lt;b&gt;x&lt;/b&gt;</p>"),  # no raw HTML
        ("## The α-entmax family\n", 'id="the-alpha-entmax-family"'),  # ASCII anchors
        ("$$\nx\n$$\n", '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">'),
        ("Text.[^1]\n\n[^1]: A note.\n", '<li id="fn1" class="footnote-item"><p>A note.'),
        ("$a$, *e*\n", "</math></span>,</span> <em>e</em>"),  # glued before other inline tokens
    ],
)
def test_the_page_dialect(markdown: str, html: str) -> None:
    assert html in html_of(markdown)


def test_a_latex_error_keeps_its_own_delimiters() -> None:
    assert render_math("x^", display=True).endswith(">$$x^$$</span>")
    assert render_math("x^", display=False).endswith(">$x^$</span>")


def test_a_yaml_error_names_its_line() -> None:
    call = content.parse_widget_block("name: results-table\nsource: [demo\n")
    assert call.error is not None
    assert call.error.startswith("The widget block is not valid YAML (line 3: ")
    assert content._yaml_problem(yaml.YAMLError("no document")) == "no document"
    unmarked = yaml.MarkedYAMLError(problem="odd input")
    assert content._yaml_problem(unmarked) == str(unmarked)


def test_render_body_joins_the_segments_as_they_are() -> None:
    paper = parse_paper(FIXTURE_CONTENT / "alpha-paper.md")
    html = render_body(paper, lambda call: "")
    assert html == "".join(s for s in paper.segments if isinstance(s, str))


def test_a_file_replaced_with_the_same_mtime_is_read_again(fixture_content: Path) -> None:
    """A deleted file leaves the cache: a new file of the same name is parsed, even when
    its modification time happens to equal the old one's."""
    library = ContentLibrary(fixture_content)
    path = fixture_content / "beta-paper.md"
    first = library.get("beta-paper")
    assert first is not None
    path.unlink()
    assert library.get("beta-paper") is None
    write(path, FRONT_MATTER + "## Replaced\n")
    os.utime(path, ns=(first.mtime_ns, first.mtime_ns))
    again = library.get("beta-paper")
    assert again is not None and again.meta.title == "A Paper"


def test_a_broken_file_is_reported_once_per_version(
    fixture_content: Path, caplog: pytest.LogCaptureFixture
) -> None:
    library = ContentLibrary(fixture_content)
    with caplog.at_level(logging.ERROR):
        library.papers()
        library.papers()
    skipped = [r.getMessage() for r in caplog.records if "broken-paper.md" in r.getMessage()]
    assert len(skipped) == 1 and skipped[0].startswith("skipping ")
    assert skipped[0].endswith(
        "broken-paper.md: front matter is not valid YAML (line 2: expected ',' or ']', but got ':')"
    )


def test_punctuation_after_inline_math_is_glued_to_it_wherever_the_math_stands() -> None:
    def glued(letter: str, mark: str) -> str:
        return (
            '<span class="math-glue"><span class="math inline">'
            '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow>'
            f"<mi>{letter}</mi></mrow></math></span>{mark}</span>"
        )

    html = html_of("$a$. Then $b$, $c$, $d$; and $e$ here $f$.\n")
    assert html == (
        f"<p>{glued('a', '.')} Then {glued('b', ',')} {glued('c', ',')} {glued('d', ';')} and "
        '<span class="math inline"><math xmlns="http://www.w3.org/1998/Math/MathML" '
        f'display="inline"><mrow><mi>e</mi></mrow></math></span> here {glued("f", ".")}</p>\n'
    )


def test_toc_entries_are_the_heading_without_its_permalink() -> None:
    _, toc = render_markdown(
        "## Using `code`\n\n### With *em* here\n\n## Plain\n\n## See [the paper](https://x.org)\n"
    )
    assert [(e.level, e.anchor, str(e.html)) for e in toc] == [
        (2, "using-code", "Using <code>code</code>"),
        (3, "with-em-here", "With <em>em</em> here"),
        (2, "plain", "Plain"),
        (2, "see-the-paper", 'See <a href="https://x.org">the paper</a>'),
    ]


def test_a_body_is_split_into_html_and_widget_calls_without_empty_pieces() -> None:
    segments, _ = render_markdown("```widget\nname: results-table\n```\n")
    assert segments == (WidgetCall("results-table", {}, None, "name: results-table\n"), "\n")
    segments, _ = render_markdown("Text {{a.b | 1 | c}}\n")
    assert [type(s).__name__ for s in segments] == ["str", "WidgetCall", "str"]


@pytest.mark.parametrize(
    ("block", "error"),
    [
        ("name: [x\n", "The widget block is not valid YAML (line 2: "),
        ("- a list\n", "The widget block needs a `name:` key."),
        ("name: 3\n", "The widget block needs a `name:` key."),
    ],
)
def test_a_broken_widget_block_keeps_its_source_for_the_error_box(block: str, error: str) -> None:
    call = content.parse_widget_block(block)
    assert (call.name, call.params, call.source) == ("", {}, block)
    assert call.error is not None and call.error.startswith(error)


@pytest.mark.parametrize(
    ("latex", "display", "kept"),
    [
        (r"\ln_{k} x", True, "<msub><mi>ln</mi>"),  # a function name, not an operator
        (r"\operatorname*{ab}_k", True, '<munder><mo movablelimits="true">ab</mo>'),
        (r"\operatorname*{a}_k", True, '<msub><mo movablelimits="true">a</mo>'),
    ],
)
def test_only_named_operators_take_their_limits_below(latex: str, display: bool, kept: str) -> None:
    assert kept in render_math(latex, display)


def test_each_latex_error_says_why_in_its_own_delimiters() -> None:
    assert render_math("x^", display=True) == (
        '<span class="math-error" role="note" title="LaTeX error: '
        'MissingSuperScriptOrSubscriptError">$$x^$$</span>'
    )
    assert render_math(r"\notacommand{x}", display=True).endswith(">$$\\notacommand{x}$$</span>")


@pytest.mark.parametrize(
    ("title", "slug"),
    [("!!!", "section"), ("a\ue000b", "a-b"), ("a—b", "a-b"), ("α–β", "alpha-beta")],
)
def test_a_heading_slug_keeps_letters_and_digits_only(title: str, slug: str) -> None:
    assert content.slugify(title) == slug


def test_front_matter_fields_are_read_as_text(tmp_path: Path) -> None:
    data, _ = split_front_matter(FRONT_MATTER)
    del data["bibtex"]
    meta = content.parse_meta({**data, "tldr": 42})
    assert (meta.tldr, meta.bibtex) == ("42", "")
    path = write(tmp_path / "a-paper.md", FRONT_MATTER + "Body.\n")
    assert parse_paper(path).path == path
    with pytest.raises(ContentError, match="^front matter lacks venue, tags$"):
        content.parse_meta({k: v for k, v in data.items() if k not in ("venue", "tags")})
