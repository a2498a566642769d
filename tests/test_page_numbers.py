"""The deep-dives' numbers agree with the data they come from.

Prose quotes our own results through `{{source.table | row | column}}` values, which the server
fills in from content/results/*.json; every other number in the results sections must be the
paper's. Claims about our set-up are checked against the checkpoint manifest and the tables.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.content import INLINE_WIDGET, parse_paper
from app.main import create_app

ROOT = Path(__file__).resolve().parent.parent
POINTER_PAGE = ROOT / "content" / "pointer-networks.md"
SPARSE_PAGE = ROOT / "content" / "sparse-seq2seq.md"
VALUE_SPAN = re.compile(r'<span class="result-value" title="[^"]*">([^<]*)</span>')
# Numbers the results section quotes from the papers' text rather than from a table on the
# page: the hull's FAIL threshold, Delaunay, the beam without the validity restriction,
# Kool et al.'s 5.70 at n = 50, Order Matters' sorting accuracies, and percentages the prose
# works out from the paper's own numbers.
PAPER_TEXT_NUMBERS = {
    "80.7%", "22.6%", "0%", "93.0%", "81.3%", "52.8%",  # Delaunay
    "1%", "10%", "5.70", "90%", "28%", "4%",
    "1.3%", "32%", "34%", "5%",  # 3.88 / 3.83, 7.66 / 5.79, 7.66 / 5.70, 6.09 / 5.79
    "13%",  # 5.91 / 5.23
}  # fmt: skip


def results(source: str) -> dict:
    return json.loads((ROOT / "content" / "results" / f"{source}.json").read_text())


def section(markdown: str, heading: str) -> str:
    start = markdown.index(f"\n{heading}\n")
    end = markdown.find(f"\n{heading.split()[0]} ", start + 1)
    return markdown[start : end if end != -1 else None]


def lookup(path: str) -> str:
    """The cell a `{{…}}` value names, found here without the app's code."""
    fields = [f.strip() for f in path.split("|")]
    source, table_id = fields[0].split(".")
    table = results(source)["tables"][table_id]
    rows = [r for r in table["rows"] if r[0] == fields[1]]
    # or the row's first two cells ("entmax15, 20": the pointer and n)
    rows = rows or [r for r in table["rows"] if ", ".join(r[:2]) == fields[1]]
    (row,) = rows
    cell = row[table["columns"].index(fields[2])]
    if len(fields) == 4:
        main, paren = re.fullmatch(r"(.*) \((.*)\)", cell).groups()
        return {"main": main, "paren": paren}[fields[3]]
    return cell


@pytest.fixture(scope="module")
def pointer_html() -> str:
    with TestClient(create_app()) as site:
        return site.get("/papers/pointer-networks").text


def test_every_value_the_pointer_page_quotes_is_its_cell_in_the_results(
    pointer_html: str,
) -> None:
    paths = [call.params["path"] for call in parse_paper(POINTER_PAGE).widgets if call.inline]
    tables = {path.split("|")[0].strip() for path in paths}
    assert {"pointer.hull", "pointer.tsp", "pointer.tsp-reference-check"} <= tables
    assert "widget-error" not in pointer_html
    shown = [html.unescape(value) for value in VALUE_SPAN.findall(pointer_html)]
    assert shown == [lookup(path) for path in paths]


@pytest.mark.parametrize(
    "heading", ["### Convex hull (paper, Table 1)", "### Travelling salesman (paper, Table 2)"]
)
def test_every_other_number_in_the_results_is_the_papers(heading: str) -> None:
    markdown = POINTER_PAGE.read_text()
    table_lines = [line for line in markdown.splitlines() if line.startswith("|")]
    paper_numbers = set(re.findall(r"\d+\.\d+%?|\d+%", "\n".join(table_lines)))
    prose = section(markdown, heading)
    prose = re.sub(r"```.*?```", "", prose, flags=re.DOTALL)  # widgets show our tables
    prose = "\n".join(line for line in prose.splitlines() if not line.startswith("|"))
    prose = INLINE_WIDGET.sub("", prose)
    literal = set(re.findall(r"\d+\.\d+%?|\d+%", prose))
    assert literal - paper_numbers - PAPER_TEXT_NUMBERS == set()


def test_tsp_prose_names_the_reference_rows_share() -> None:
    # "At n = 5 and 10 the reference is {{… 5 …}}. From n = 20 on, … it is the {{… 20 …}}"
    tsp = results("pointer")["tables"]["tsp"]
    reference = {row[0]: row[tsp["columns"].index("reference")] for row in tsp["rows"]}
    assert reference["5"] == reference["10"]
    assert {reference[n] for n in reference if int(n) >= 20} == {reference["20"]}
    assert "At $n$ = 5 and 10 the reference is {{pointer.tsp | 5 | reference}}" in (
        POINTER_PAGE.read_text()
    )


def test_set_up_claims_match_the_manifest_and_the_tables() -> None:
    prose = " ".join(POINTER_PAGE.read_text().split())
    manifest = json.loads((ROOT / "checkpoints" / "manifest.json").read_text())
    hidden = {entry["config"]["hidden"] for name, entry in manifest.items() if "pointer" in name}
    stated = re.search(r"the hidden size is (\d+) for every model", prose)
    assert stated and hidden == {int(stated.group(1))}
    hull_sizes = [int(row[0]) for row in results("pointer")["tables"]["hull"]["rows"]]
    stated = re.search(r"tested at the paper's sizes up to (\d+) points", prose)
    assert stated and max(hull_sizes) == int(stated.group(1))


def test_sparse_page_speed_claims_agree_with_its_table() -> None:
    """The reference's range is quoted the same way twice, and the prose's "costs what softmax
    does on wide rows" holds for the kernel table's widest rows."""
    markdown = SPARSE_PAGE.read_text()
    speed = section(markdown, "## Speed on a CPU")
    stated = re.search(r"(\d+)–(\d+)× slower than softmax", speed)
    assert stated and markdown.count(stated.group(0)) == 2
    rows = [line.split("|")[1:-1] for line in speed.splitlines() if re.match(r"\| \d", line)]
    ratios = {r[0].strip(): [float(c.strip().rstrip("×")) for c in r[1:]] for r in rows}
    assert ratios["64 × 32,000"][0] <= 1.5 and ratios["64 × 32,000"][2] <= 2


def test_a_support_is_never_shown_larger_than_what_it_is_part_of() -> None:
    """ "13.65 of 13.6" read as a support larger than the sentence: both sides get the same
    decimals, and the part is at most the whole."""
    table = json.loads((ROOT / "content/results/seq2seq.json").read_text())["tables"]["sparsity"]
    pattern = re.compile(r"[\d,.]+ of [\d,.]+")
    cells = [cell for row in table["rows"] for cell in row if pattern.fullmatch(cell)]
    assert len(cells) >= len(table["rows"])
    for cell in cells:
        part, whole = (float(side.replace(",", "")) for side in cell.split(" of "))
        assert part <= whole, cell
        decimals = [len(side.partition(".")[2]) for side in cell.split(" of ")]
        assert decimals[0] == decimals[1] or whole == int(whole), cell
