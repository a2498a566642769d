"""Every live figure taken away (app/figure_export.py): its take-away block on the page and in
each answer, a "Run it yourself" script that prints the API's answer (each one run here, in one
interpreter, as a reader would run it), a citation, a link, and a self-contained SVG (well-formed,
no stylesheet variables, the caption naming checkpoint and sha256) and its PNG."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.figure_export import caption_lines, standalone_style
from app.main import ROOT, create_app

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def site() -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


def block(page: str, slot: str) -> dict[str, str]:
    """The take-away block `slot` of a rendered page or fragment: its links and texts."""
    found = re.search(rf'<div class="take-away" id="{slot}"(.*?)</details>\s*</div>', page, re.S)
    assert found, f"no take-away block {slot}"
    text = found[1]

    def code(kind: str) -> str:
        match = re.search(rf'id="{slot}-{kind}"[^>]*><code[^>]*>(.*?)</code>', text, re.S)
        assert match, kind
        return html.unescape(match[1])

    links = {
        name: html.unescape(href)
        for href, name in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', text)
    }
    return {"cite": code("cite"), "run": code("run"), **links}


def run_scripts(scripts: list[str]) -> list[str]:
    """Each script's output, run one after another in one interpreter from the repository's
    root, each in a namespace of its own (as a file of its own would be)."""
    runner = (
        "import json, sys, io, contextlib\n"
        "outputs = []\n"
        "for source in json.load(sys.stdin):\n"
        "    buffer = io.StringIO()\n"
        "    with contextlib.redirect_stdout(buffer):\n"
        "        exec(compile(source, 'snippet.py', 'exec'), {'__name__': '__main__'})\n"
        "    outputs.append(buffer.getvalue())\n"
        "print(json.dumps(outputs))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", runner],
        input=json.dumps(scripts),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- pointer boards ----

POINTER_CASES = [  # (page, board key, task, the board's fields in the address)
    ("pointer-networks", "hull", "hull", {}),
    ("pointer-networks", "hull", "hull", {"snapshot": "3"}),  # a training snapshot's answer
    ("pointer-networks", "tsp", "tsp", {"decoder": "beam", "beam_width": "3"}),
    ("pointer-networks", "sort", "sort", {"decoder": "sample", "samples": "5", "seed": "2"}),
    ("attention-routing", "am", "tsp", {"decoder": "symmetric"}),
]


def pointer_page(site: TestClient, slug: str, key: str, fields: dict[str, str]) -> str:
    query = "&".join(f"{key}-{name}={value}" for name, value in fields.items())
    answer = site.get(f"/papers/{slug}?{query}")
    assert answer.status_code == 200
    return answer.text


def test_each_figure_script_prints_the_api_answer(site: TestClient) -> None:
    """Every live figure's script, run as a reader would, prints what the API answers for the
    request the figure drew."""
    cases = [
        *pointer_cases(site),
        *routing_cases(site),
        *seq2seq_cases(site),
        *playground_cases(site),
    ]
    assert run_scripts([script for script, _ in cases]) == [expected for _, expected in cases]


def pointer_cases(site: TestClient) -> list[tuple[str, str]]:
    """Each board's script, and the order and verdict the API gives for its request."""
    scripts, expected = [], []
    for slug, key, task, fields in POINTER_CASES:
        taken = block(pointer_page(site, slug, key, fields), f"pb-{key}-take-away")
        scripts.append(taken["run"])
        body = re.search(r"PointerRequest\((.*?)\),\n    local_models", taken["run"], re.S)
        assert body, taken["run"]
        request = eval(f"dict({body[1]})")  # noqa: S307 (the script we generated)
        api = site.post(
            f"/api/pointer/{task}",
            json={
                **{"points" if task != "sort" else "values": request["inputs"]},
                **{k: v for k, v in request.items() if k not in {"task", "inputs"}},
            },
        )
        assert api.status_code == 200, api.text
        expected.append(f"order: {api.json()['order']}\ncorrect: {api.json()['correct']}\n")
        assert request.get("decoder", "greedy") == fields.get("decoder", "greedy")
    return list(zip(scripts, expected, strict=True))


ROUTING_CASES = [  # (figure, its address keys beyond the example's)
    ("attention", {"attn-layer": "2", "attn-head": "5", "attn-city": "4"}),
    ("reinforce", {"rl-samples": "6", "rl-seed": "3"}),
]


def routing_cases(site: TestClient) -> list[tuple[str, str]]:
    """The attention model's figures: the weights of the drawn city, the baseline and the
    sampled tours' lengths and advantages, as GET /api/routing/<figure> answers them."""
    cases = []
    for name, fields in ROUTING_CASES:
        query = "&".join(f"{k}={v}" for k, v in fields.items())
        page = site.get(f"/papers/attention-routing?{query}")
        taken = block(page.text, f"routing-{name}-take-away")
        api = site.get(
            taken["Copy link"]
            .split("?", 1)[0]
            .replace("/papers/attention-routing", f"/api/routing/{name}")
            + "?"
            + "&".join(
                part.split("-", 1)[1]
                for part in taken["Copy link"].split("?", 1)[1].split("#")[0].split("&")
            )
        ).json()
        if name == "attention":
            city = int(fields["attn-city"])
            expected = f"weights of city {city}: {api['weights'][city - 1]}\n"
        else:
            samples = [(t["length"], t["advantage"]) for t in api["samples"]]
            expected = f"baseline: {api['baseline']['length']}\nsamples: {samples}\n"
            assert len(samples) == 6
        cases.append((taken["run"], expected))
    return cases


SEQ2SEQ_CASES = [  # (figure, its round trip's query: what a reader's controls send)
    ("inflect", "lemma=sing&language=en&features=V;PST&beam_width=3&alpha=2"),
    ("inflect", "lemma=sing&language=en&features=V;PST&snapshot=3"),
    ("translate", "text=Open+a+new+window&beam_width=2&compare=1"),
    ("translate", "text=Delete+300+files&beam_width=2&alpha=1.5&copy_model=1&copy_beside=1"),
    (
        "inflect",
        "lemma=Haus&language=de&features=N;NOM;PL&mode=inference&base_alpha=1.5"
        "&inference_alpha=1.2",
    ),
]
PAGE = "http://testserver/papers/sparse-seq2seq"


def seq2seq_cases(site: TestClient) -> list[tuple[str, str]]:
    """Each figure's script prints each column's model and best answer, as the API's JSON for
    the same requests has them."""
    cases = []
    for path, query in SEQ2SEQ_CASES:
        answer = site.get(
            f"/api/seq2seq/{path}/figure?{query}",
            headers={"HX-Request": "true", "HX-Current-URL": PAGE},
        )
        assert answer.status_code == 200, answer.text
        taken = block(answer.text, f"seq2seq-{path}-take-away")
        requests = re.findall(
            r"(?:Inflect|Translate)Request\((.*?)\)(?:,|, local_models)", taken["run"]
        )
        assert requests, taken["run"]
        lines = []
        for body in requests:
            fields = eval(f"dict({body})")  # noqa: S307 (the script we generated)
            api = site.post(f"/api/seq2seq/{path}", json=fields).json()
            lines.append(f"{api['model']['name']} -> {api['hypotheses'][0]['text']}\n")
        cases.append((taken["run"], "".join(lines)))
    assert any(len(case[1].splitlines()) == 3 for case in cases)  # the compared columns
    assert any("copy" in case[1] for case in cases)  # a copy model's column
    return cases


def playground_cases(site: TestClient) -> list[tuple[str, str]]:
    """The playground's script prints the probabilities and support of POST /api/entmax."""
    page = site.get("/papers/sparse-seq2seq?entmax-alpha=1.8")
    taken = block(page.text, "entmax-playground-take-away")
    request = re.search(r"EntmaxRequest\((.*?)\)\)", taken["run"])[1]
    api = site.post("/api/entmax", json=eval(f"dict({request})")).json()  # noqa: S307
    assert "alpha=1.8" in taken["run"]
    expected = f"probabilities: {api['probabilities']}\nsupport: {api['support_size']}\n"
    return [(taken["run"], expected)]


@pytest.mark.parametrize(
    "route",
    [
        "/api/seq2seq/translate/figure.{kind}?text=Open+a+new+window&compare=1",
        "/api/seq2seq/inflect/figure.{kind}?lemma=go&language=en&features=V;PST",
        "/api/entmax/figure.{kind}?text=a+b+c&scores=1&scores=0&scores=3&alpha=2",
    ],
)
def test_the_sparse_figures_export_svg_and_png(site: TestClient, route: str) -> None:
    svg = site.get(route.format(kind="svg"), headers={"Referer": PAGE})
    assert svg.status_code == 200, svg.text
    root = ET.fromstring(svg.content)
    caption = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pt-caption")
    assert "Sparse Sequence-to-Sequence Models (2019)" in caption
    assert ("sha256" in caption) == ("entmax" not in route)
    if "compare" in route:  # one heading a column
        headings = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pt-heading"]
        assert len(headings) == 3 and all("α = " in h for h in headings)
    png = site.get(route.format(kind="png"), headers={"Referer": PAGE})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")


def test_a_board_answer_redraws_its_take_away_block(site: TestClient) -> None:
    page = "http://testserver/papers/pointer-networks?hull-decoder=greedy"
    answer = site.get(
        "/api/pointer/hull/board/hull?points=0.1,0.1;0.9,0.2;0.5,0.9;0.5,0.4&decoder=beam"
        "&beam_width=2",
        headers={"HX-Request": "true", "HX-Current-URL": page},
    )
    assert answer.status_code == 200
    assert 'id="pb-hull-take-away" hx-swap-oob="outerHTML"' in answer.text
    taken = block(answer.text, "pb-hull-take-away")
    # a path on this site, never built from the request's Host header (the script makes it
    # absolute where it is copied)
    assert taken["Copy link"].startswith("/papers/pointer-networks?")
    assert "hull-points=0.1,0.1;0.9,0.2;0.5,0.9;0.5,0.4" in taken["Copy link"]
    assert taken["Copy link"].endswith("#pointer-board-hull")
    assert "decoder='beam', beam_width=2" in taken["run"]
    assert taken["cite"].startswith("@inproceedings{vinyals2015pointer,")
    assert "\\cite{vinyals2015pointer}" in taken["cite"]
    assert taken["Copy link"] in taken["cite"]
    assert taken["Download SVG"].startswith("/api/pointer/hull/figure.svg?points=0.1,0.1;")


@pytest.mark.parametrize("slot", ["routing-attention-take-away", "routing-reinforce-take-away"])
def test_the_routing_figures_export_their_maps(site: TestClient, slot: str) -> None:
    page = "http://testserver/papers/attention-routing?attn-city=2"
    taken = block(site.get("/papers/attention-routing").text, slot)
    svg = site.get(taken["Download SVG"], headers={"Referer": page})
    root = ET.fromstring(svg.content)
    maps = [e for e in root.iter(f"{SVG}svg") if e.get("class") == "routing-map"]
    assert len(maps) == 1  # the figure's own map, placed in the document
    caption = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pt-caption")
    assert "attention-routing-tsp20" in caption and "Attention, Learn to Solve" in caption
    png = site.get(taken["Download PNG"], headers={"Referer": page})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")


def test_a_board_exports_a_self_contained_svg_and_a_png(site: TestClient) -> None:
    page = "http://testserver/papers/pointer-networks?tsp-decoder=greedy"
    taken = block(pointer_page(site, "pointer-networks", "tsp", {}), "pb-tsp-take-away")
    svg = site.get(taken["Download SVG"], headers={"Referer": page})
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert "attachment" in svg.headers["content-disposition"]
    root = ET.fromstring(svg.content)  # well-formed
    style = root.find(f"{SVG}style").text
    assert "var(" not in style and "color-mix" not in style
    caption = " ".join(t.text for t in root.iter(f"{SVG}text") if t.get("class") == "pt-caption")
    manifest = json.loads((ROOT / "checkpoints/manifest.json").read_text())
    name = re.search(r"model='([^']+)'", taken["run"])[1]
    assert manifest[name]["sha256"] in caption.replace(" ", "")
    assert "Pointer Networks (2015)" in caption
    link = caption.replace(" ", "").split("sha256")[-1]
    assert "http://testserver/papers/pointer-networks?tsp-points=" in link
    assert "tsp-decoder=greedy" in link and link.endswith("#pointer-board-tsp")
    png = site.get(taken["Download PNG"], headers={"Referer": page})
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = (int.from_bytes(png.content[i : i + 4], "big") for i in (16, 20))
    assert width == 2 * int(root.get("width")) and height == 2 * int(root.get("height"))


def test_an_export_is_priced_and_refused_like_the_board(site: TestClient) -> None:
    many = ";".join(f"{i / 2500:.4f},{(i * 7 % 2500) / 2500:.4f}" for i in range(2500))
    refused = site.get(f"/api/pointer/hull/figure.svg?points={many}")
    assert refused.status_code == 422 and len(refused.content) < 2000
    assert site.get("/api/pointer/hull/figure.gif?points=0,0;1,0;0,1").status_code in (404, 422)


def test_the_exported_style_resolves_the_site_variables() -> None:
    style = standalone_style("css/pointer.css", ".pb-")
    site_css = (ROOT / "static/css/site.css").read_text()
    model = re.search(r"--mark-model:\s*(#[0-9a-f]{6})", site_css)[1]
    assert re.search(rf"\.pb-model \{{[^}}]*stroke: {model}", style), style[:500]
    assert ":hover" not in style and "@media" not in style


def test_caption_lines_fit_their_width() -> None:
    text = "A caption with http://example.org/" + "x" * 150 + " at its end"
    lines = caption_lines(text, 40)
    assert all(len(line) <= 40 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


def test_scripts_use_only_the_repository(tmp_path: Path) -> None:
    """Scripts import this repository's modules, nothing a reader must install besides it."""
    from app.pointer.export import snippet
    from app.pointer.requests import PointsBoard

    board = PointsBoard(points=[[0.1, 0.1], [0.9, 0.2], [0.5, 0.9]])

    class Model:
        name, sha256 = "pointer-hull", "0" * 64

    class Result:
        model = Model()

    source = snippet("hull", board, Result())
    imports = re.findall(r"^from (\S+) import", source, re.M)
    assert imports and all(name.split(".")[0] in {"app", "models"} for name in imports)


# ---- every live figure has a data table, redrawn with the figure ----


@pytest.mark.parametrize(
    ("route", "table"),
    [
        ("/api/pointer/hull/board/hull?points=0.1,0.1;0.9,0.2;0.5,0.9;0.5,0.4", "pb-table"),
        ("/api/seq2seq/translate/figure?text=Open+a+new+window", "s2s-table"),
        ("/api/seq2seq/inflect/figure?lemma=go&language=en&features=V;PST", "s2s-table"),
        ("/api/entmax/figure?text=a+b+c&scores=1&scores=0&scores=3&alpha=2", "entmax-data"),
        ("/api/routing/attention?points=0.1,0.1;0.9,0.2;0.5,0.9;0.5,0.4", "routing-table"),
        ("/api/routing/reinforce?points=0.1,0.1;0.9,0.2;0.5,0.9;0.5,0.4", "routing-bars"),
    ],
)
def test_each_answer_redraws_its_data_table(site: TestClient, route: str, table: str) -> None:
    answer = site.get(route, headers={"HX-Request": "true", "HX-Current-URL": PAGE})
    assert answer.status_code == 200
    found = re.search(rf'class="{table}"(.*?)</table>', answer.text, re.S)
    assert found and "<th" in found[1] and "<td" in found[1]
    if table == "entmax-data":  # out of band, with the probabilities of this answer
        assert 'id="entmax-data" hx-swap-oob="true"' in answer.text
        assert "support 1 of 3" in found[1] and "<td>0</td>" in found[1]
