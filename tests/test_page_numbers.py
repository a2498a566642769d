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
ROUTING_PAGE = ROOT / "content" / "attention-routing.md"
VALUE_SPAN = re.compile(r'<span class="result-value" title="[^"]*">([^<]*)</span>')
PAGES = {
    "pointer-networks": POINTER_PAGE,
    "sparse-seq2seq": SPARSE_PAGE,
    "attention-routing": ROUTING_PAGE,
}
# The sections that report our models: every decimal, percentage or ratio in them is a
# `{{…}}` value, a number in one of the page's tables of the paper's results, or one of these
# numbers the prose quotes from the papers' text (with where it comes from).
RESULTS_SECTIONS = {
    "pointer-networks": (
        "## At a glance",
        "## How we reproduce it",
        "## Results: the paper and ours",
    ),
    "sparse-seq2seq": (
        "## At a glance",
        "### Our inflection results",
        "### The widget's models",
        "### Our translation results",
        "## How sparse are the trained models?",
    ),
    "attention-routing": ("## At a glance", "## Results: the paper and ours"),
}
KOOL_TABLE_1 = "Kool et al. 2019, Table 1, attention model with the rollout baseline"
PAPER_TEXT_NUMBERS = {
    "pointer-networks": {
        "1%": "Vinyals et al. 2015, Table 1: FAIL when more than 1% of outputs are not simple",
        "10%": "Vinyals et al. 2015, §4.4: without the validity restriction, at n > 20 at least "
        "10% of instances had no valid tour in the beam",
        "80.7%": "Vinyals et al. 2015, §4.3 (Delaunay, n = 5)",
        "22.6%": "§4.3 (Delaunay, n = 10)",
        "0%": "§4.3 (Delaunay, n = 50)",
        "93.0%": "§4.3 (Delaunay triangle coverage, n = 5)",
        "81.3%": "§4.3 (n = 10)",
        "52.8%": "§4.3 (n = 50)",
        "≥ 99.2%": "Table 1: the lowest area coverage, at n = 500",
        "5.70": "Kool et al. 2019, Table 1: Concorde at n = 50",
        "90%": "Vinyals, Bengio, Kudlur 2016 (Order Matters), Table 1, n = 5",
        "28%": "Order Matters, Table 1, n = 10",
        "4%": "Order Matters, Table 1, n = 15",
        "1.3%": "Table 2: 3.88 / 3.83 at n = 20",
        "34%": "Table 2 and Kool et al.: 7.66 / 5.70",
        "5%": "Table 2: 6.09 / 5.79 (the A3-trained model against its teacher)",
        "13%": "Table 2: 5.91 / 5.23 at n = 40",
        "100%": "a secondary summary's claim, quoted under 'Where common summaries overstate'",
    },
    "sparse-seq2seq": {
        "2.5": "Peters et al. 2019, §5.1: up to 2.5 points for single models, medium setting",
    },
    "attention-routing": {
        "0.34%": f"{KOOL_TABLE_1}: TSP20 greedy",
        "0.08%": f"{KOOL_TABLE_1}: TSP20 sampling 1,280",
        "1.76%": f"{KOOL_TABLE_1}: TSP50 greedy",
        "0.52%": f"{KOOL_TABLE_1}: TSP50 sampling",
        "4.53%": f"{KOOL_TABLE_1}: TSP100 greedy",
        "2.26%": f"{KOOL_TABLE_1}: TSP100 sampling",
        "3.85": f"{KOOL_TABLE_1}: TSP20 greedy length",
        "3.84": f"{KOOL_TABLE_1}: TSP20 sampling length, and Concorde's",
        "5.80": f"{KOOL_TABLE_1}: TSP50 greedy length",
        "5.73": f"{KOOL_TABLE_1}: TSP50 sampling length",
        "8.12": f"{KOOL_TABLE_1}: TSP100 greedy length",
        "7.94": f"{KOOL_TABLE_1}: TSP100 sampling length",
    },
}
# names of mappings ("1.5-entmax", "α = 1.5") are not results
MAPPING_NAME = re.compile(r"\d+(?:\.\d+)?-entmax|α = \d+(?:\.\d+)?")
NUMBER = re.compile(r"≥ \d+(?:\.\d+)?%|\d+(?:\.\d+)?%|\d+\.\d+|\d+(?:\.\d+)?×")


def results(source: str) -> dict:
    return json.loads((ROOT / "content" / "results" / f"{source}.json").read_text())


def section(markdown: str, heading: str) -> str:
    """From the heading to the next heading of the same level or above."""
    start = markdown.index(f"\n{heading}\n")
    level = heading.split()[0]
    ends = [
        found.start()
        for found in re.finditer(r"\n(#+) ", markdown[start + 1 :])
        if len(found.group(1)) <= len(level)
    ]
    return markdown[start : start + 1 + ends[0] if ends else None]


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
def page_html() -> dict[str, str]:
    with TestClient(create_app()) as site:
        return {slug: site.get(f"/papers/{slug}").text for slug in PAGES}


@pytest.mark.parametrize("slug", sorted(PAGES))
def test_every_value_a_page_quotes_is_its_cell_in_the_results(
    slug: str, page_html: dict[str, str]
) -> None:
    paths = [call.params["path"] for call in parse_paper(PAGES[slug]).widgets if call.inline]
    assert paths, slug
    assert "widget-error" not in page_html[slug]
    shown = [html.unescape(value) for value in VALUE_SPAN.findall(page_html[slug])]
    assert shown == [lookup(path) for path in paths]


def hand_typed_numbers(slug: str, markdown: str) -> set[str]:
    """The numbers in a page's results sections that are neither `{{…}}` values nor the
    paper's (its Markdown tables, or PAPER_TEXT_NUMBERS)."""
    table_lines = [line for line in markdown.splitlines() if line.startswith("|")]
    paper_numbers = set(NUMBER.findall("\n".join(table_lines)))
    found: set[str] = set()
    for heading in RESULTS_SECTIONS[slug]:
        prose = section(markdown, heading)
        prose = re.sub(r"```.*?```", "", prose, flags=re.DOTALL)  # widgets show our tables
        prose = "\n".join(line for line in prose.splitlines() if not line.startswith("|"))
        prose = MAPPING_NAME.sub("", INLINE_WIDGET.sub("", prose))
        found |= set(NUMBER.findall(prose))
    return found - paper_numbers - PAPER_TEXT_NUMBERS[slug].keys()


@pytest.mark.parametrize("slug", sorted(PAGES))
def test_every_other_number_in_the_results_is_the_papers(slug: str) -> None:
    assert hand_typed_numbers(slug, PAGES[slug].read_text()) == set()


def test_a_hand_typed_number_about_our_model_fails_the_check() -> None:
    markdown = POINTER_PAGE.read_text()
    planted = markdown.replace(
        "gets {{pointer.hull | 50 | accuracy (beam 8)}} of 50-point hulls",
        "gets 80.8% of 50-point hulls",
    )
    assert planted != markdown
    assert hand_typed_numbers("pointer-networks", planted) == {"80.8%"}


@pytest.mark.parametrize("slug", sorted(PAGES))
def test_the_article_binds_only_to_models_in_the_tree(slug: str) -> None:
    """Rows of models that left checkpoints/ (their history is on the model cards) are neither
    quoted nor shown: every seq2seq row a page names is a model in the manifest."""
    from models.evaluate_seq2seq import model_name

    manifest = json.loads((ROOT / "checkpoints" / "manifest.json").read_text())
    tasks = {"inflection-full": "inflection", "translation-live": "translation"}
    named: list[tuple[str, str]] = []
    for call in parse_paper(PAGES[slug]).widgets:
        if call.inline:
            fields = [f.strip() for f in call.params["path"].split("|")]
            named.append((fields[0].split(".")[1], fields[1]))
        elif call.name == "results-table" and call.params.get("table") in tasks:
            assert "rows" in call.params, call.params["table"]
            named += [(call.params["table"], key) for key in call.params["rows"]]
    for table_id, key in named:
        if table_id in tasks:
            setting, alpha = key.rsplit(", ", 1)
            assert model_name(tasks[table_id], float(alpha), setting) in manifest, key


def test_tsp_prose_names_the_reference_rows_share() -> None:
    # "At n = 5 and 10 the reference is {{… 5 …}}. From n = 20 on, … it is the {{… 20 …}}"
    tsp = results("pointer")["tables"]["tsp"]
    reference = {row[0]: row[tsp["columns"].index("reference")] for row in tsp["rows"]}
    assert reference["5"] == reference["10"]
    assert {reference[n] for n in reference if int(n) >= 20} == {reference["20"]}
    assert "At $n$ = 5 and 10 the reference is {{pointer.tsp | 5 | reference}}" in " ".join(
        POINTER_PAGE.read_text().split()
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
