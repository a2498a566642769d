"""HTTP routes: the library, paper pages, widgets in place, 404s, HEAD, health, assets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.assets import PLOTLY_URL
from app.main import create_app
from app.widgets import WIDGETS, WidgetEnv, WidgetSpec
from tests.conftest import FIXTURE_CONTENT

ROOT = Path(__file__).resolve().parent.parent
DEEP_DIVES = ("pointer-networks", "sparse-seq2seq")


def test_library_lists_cards_in_front_matter_order(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert html.index("Pointing at Fixtures") < html.index("Attention Is a Test Fixture")
    assert "Grace Hopper" in html and "Ada Lovelace, Alan Turing" in html
    assert 'href="https://arxiv.org/abs/1706.00001"' in html
    assert "A fixture paper that exercises math" in html
    assert 'href="/papers/alpha-paper"' in html
    assert "broken" not in html.lower()


def test_library_filters_by_tag_without_javascript(client: TestClient) -> None:
    html = client.get("/", params={"tag": "pointers"}).text
    assert "Pointing at Fixtures" in html
    assert "Attention Is a Test Fixture" not in html
    assert re.search(r'class="tag is-active" href="/\?tag=pointers"[^>]*aria-current="page"', html)


def test_library_with_an_unknown_tag_says_so(client: TestClient) -> None:
    html = client.get("/", params={"tag": "astrology"}).text
    assert "No paper is tagged “astrology”" in html
    assert "data-empty-state hidden" not in html


def test_paper_page_has_title_block_toc_prose_and_citation(client: TestClient) -> None:
    response = client.get("/papers/alpha-paper")
    assert response.status_code == 200
    html = response.text
    assert "<h1>Attention Is a Test Fixture</h1>" in html
    assert "<title>Attention Is a Test Fixture — PaperTrace</title>" in html
    assert "Ada Lovelace, Alan Turing" in html
    assert "NeurIPS · 2017" in html
    assert 'href="https://arxiv.org/abs/1706.00001"' in html
    assert "A fixture paper that exercises math, tables, footnotes and widgets." in html
    for anchor in ("the-problem", "a-table", "results", "broken-things", "cite"):
        assert f'href="#{anchor}"' in html
        assert f'id="{anchor}"' in html
    assert "<math" in html
    assert "@inproceedings{lovelace2017fixture," in html
    assert 'data-copy-target="bibtex-entry"' in html


def test_paper_page_escapes_raw_html(client: TestClient) -> None:
    html = client.get("/papers/alpha-paper").text
    assert 'alert("x")' not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html


def test_every_script_is_a_static_file(client: TestClient) -> None:
    for path in ("/", "/papers/alpha-paper", "/no-such-page"):
        html = client.get(path).text
        scripts = re.findall(r"<script\b[^>]*>", html)
        assert scripts, path
        assert all('src="/static/' in tag for tag in scripts), scripts
        assert "<script>" not in html.replace("&lt;script&gt;", "")
        assert "//cdn" not in html and "https://unpkg" not in html


def test_results_table_widget_renders_the_results_file(client: TestClient) -> None:
    html = client.get("/papers/alpha-paper").text
    assert 'id="table-main-caption">Demo accuracy on 1,000 test instances</p>' in html
    assert (
        '<th scope="row" data-label="model">1.5-entmax</th>'
        '<td data-label="accuracy">92.4%</td><td data-label="support">3.1</td>'
    ) in html
    assert "A fixture table." in html
    assert "python -m models.evaluate demo" in html


def test_missing_results_say_so_with_the_command(client: TestClient) -> None:
    html = client.get("/papers/alpha-paper").text
    assert "content/results/demo.json has no table “absent”" in html
    assert "No results yet: content/results/nowhere.json has not been generated." in html
    assert "python -m models.evaluate nowhere" in html


def test_broken_widgets_show_error_boxes_and_the_page_still_renders(client: TestClient) -> None:
    response = client.get("/papers/alpha-paper")
    assert response.status_code == 200
    html = response.text
    assert "There is no widget called “no-such-widget”." in html
    assert "The widget block is not valid YAML" in html
    assert html.count('class="widget-error"') == 4
    assert 'data-widget="no-such-widget"' in html  # each box names its widget
    assert html.count('class="math-error"') == 2
    assert "Cite this paper" in html  # everything after the broken parts is still there


def test_a_failing_provider_is_contained(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setitem(WIDGETS, "results-table", WidgetSpec("results-table", explode))
    response = client.get("/papers/alpha-paper")
    assert response.status_code == 200
    assert "The widget “results-table” failed" in response.text
    assert "boom" not in response.text


def test_only_pages_whose_widgets_need_plotly_load_it(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert PLOTLY_URL not in client.get("/papers/alpha-paper").text
    spec = WIDGETS["results-table"]
    needs = frozenset({"plotly", "htmx", "js/demo.js", "css/demo.css"})
    monkeypatch.setitem(WIDGETS, "results-table", WidgetSpec(spec.name, spec.context, needs))
    html = client.get("/papers/alpha-paper").text
    sources = re.findall(r'<script src="([^"]+)"', html)
    assert sources[0] == "/static/js/site.js"
    assert sources[1] == PLOTLY_URL
    assert re.fullmatch(r"/static/vendor/htmx-[\d.]+\.min\.js", sources[2])
    assert sources[3:] == ["/static/js/demo.js"]
    stylesheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    assert stylesheets == ["/static/css/site.css", "/static/css/demo.css"]
    assert PLOTLY_URL not in client.get("/papers/beta-paper").text


def test_pure_widgets_render_once_per_params_and_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Mapping[str, Any]] = []
    spec = WIDGETS["results-table"]

    def counting(params: Mapping[str, Any], env: WidgetEnv) -> dict[str, Any]:
        calls.append(params)
        assert spec.context is not None
        return spec.context(params, env)

    monkeypatch.setitem(
        WIDGETS, "results-table", WidgetSpec(spec.name, counting, spec.needs, pure=True)
    )
    app = create_app(content_dir=FIXTURE_CONTENT, checkpoint_dir=tmp_path)
    with TestClient(app) as site:
        first = site.get("/papers/alpha-paper").text
        assert len(calls) == 3  # one good table, two error boxes
        assert site.get("/papers/alpha-paper").text == first
        assert len(calls) == 5  # the good table came from the cache; failures were retried
        # A training run rewriting the manifest makes the figures be drawn again.
        (tmp_path / "manifest.json").write_text("{}")
        assert site.get("/papers/alpha-paper").text == first
        assert len(calls) == 8


@pytest.mark.parametrize("path", ["/papers/no-such-paper", "/papers/broken-paper", "/nowhere"])
def test_unknown_pages_get_a_real_404_page_with_a_way_home(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "There is no page here" in response.text
    assert 'href="/"' in response.text


def test_unknown_api_routes_get_json_404s(client: TestClient) -> None:
    response = client.get("/api/nothing")
    assert response.status_code == 404
    assert response.json() == {
        "detail": "There is no endpoint at /api/nothing; the API's endpoints are listed at /docs "
        "(and in /openapi.json)."
    }


@pytest.mark.parametrize(
    "path", ["/", "/papers/alpha-paper", "/healthz", "/static/css/site.css", PLOTLY_URL]
)
def test_head_requests_work(client: TestClient, path: str) -> None:
    response = client.head(path)
    assert response.status_code == 200
    assert response.content == b""


def test_healthz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


def test_docs_stay_on(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    assert client.get("/openapi.json").json()["info"]["title"] == "PaperTrace"


def test_assets_are_served_locally(client: TestClient) -> None:
    css = client.get("/static/css/site.css")
    assert css.status_code == 200 and "prefers-color-scheme: dark" in css.text
    assert "@media print" in css.text
    htmx = sorted((ROOT / "static" / "vendor").glob("htmx-*.min.js"))
    assert len(htmx) == 1
    assert client.get(f"/static/vendor/{htmx[0].name}").status_code == 200
    plotly_js = client.get(PLOTLY_URL)
    assert plotly_js.status_code == 200
    assert plotly_js.headers["content-type"].startswith("text/javascript")
    assert b"plotly.js v" in plotly_js.content[:200]


def test_plotly_is_not_copied_into_the_repository() -> None:
    assert not list((ROOT / "static").rglob("plotly*"))


def test_both_deep_dives_exist_and_render() -> None:
    with TestClient(create_app()) as site:
        library = site.get("/").text
        for slug in DEEP_DIVES:
            assert f'href="/papers/{slug}"' in library
            html = site.get(f"/papers/{slug}").text
            assert "<math" in html, slug
            assert 'class="math-error"' not in html, slug
            assert "There is no widget called" not in html, slug
            assert 'id="reproduce"' in html, slug
