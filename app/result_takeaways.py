"""One plain sentence under each of our results tables, computed from the table's own cells
(content/results/<source>.json), so the sentence stays true when the numbers are regenerated.

Each function takes a table (`columns`, `rows` of display strings) and returns a sentence.
A table whose columns no longer match raises `TakeawayError`; the table then shows without
a takeaway, and tests/test_result_takeaways.py fails so the sentence gets fixed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

NUMBER = re.compile(r"[-+−]?\d[\d,]*(?:\.\d+)?")


class TakeawayError(ValueError):
    """A table that no longer has the cells its takeaway reads."""


Table = Mapping[str, Any]


def number(cell: str) -> float:
    """The first number in a display cell: "6.135 (+6.11%)" → 6.135, "10.8%" → 10.8."""
    match = NUMBER.search(str(cell))
    if match is None:
        raise TakeawayError(f"“{cell}” holds no number")
    return float(match.group().replace(",", "").replace("−", "-"))


def column(table: Table, name: str) -> list[str]:
    columns = list(table.get("columns", []))
    if name not in columns:
        raise TakeawayError(f"no column “{name}”")
    index = columns.index(name)
    return [str(row[index]) for row in table.get("rows", [])]


def rows_where(table: Table, name: str, value: str) -> list[Sequence[str]]:
    index = list(table.get("columns", [])).index(name)
    return [row for row in table.get("rows", []) if str(row[index]) == value]


def points(value: float) -> str:
    """A difference in percentage points, signed, without a "-0.0"."""
    rounded = round(value, 1)
    return "±0.0" if rounded == 0 else f"{rounded:+.1f}".replace("-", "−")


def join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def hull(table: Table) -> str:
    sizes = column(table, "tested n")
    ours = [number(c) for c in column(table, "accuracy (beam 8)")]
    paper = [number(c) for c in column(table, "paper accuracy")]
    close = [n for n, a, b in zip(sizes, ours, paper, strict=True) if a >= b - 3]
    behind = [
        f"{a:.1f}% against {b:.1f}% at n = {n}"
        for n, a, b in zip(sizes, ours, paper, strict=True)
        if a < b - 3
    ]
    if not behind:
        return f"Our beam-8 accuracy is within 3 points of the paper's at every n ({join(sizes)})."
    if not close:
        return f"Our beam-8 accuracy falls behind the paper's at every n: {join(behind)}."
    return (
        f"Our beam-8 accuracy is within 3 points of the paper's at n = {join(close)}, "
        f"and falls behind beyond: {join(behind)}."
    )


def tsp(table: Table) -> str:
    sizes = column(table, "tested n")
    cells = column(table, "ours beam 8")
    paper = column(table, "paper Ptr-Net")
    groups: dict[str, list[str]] = {"within 1% of": [], "shorter than": [], "longer than": []}
    for n, ours, theirs in zip(sizes, cells, paper, strict=True):
        a, b = number(ours), number(theirs)
        key = "shorter than" if a < b * 0.99 else "longer than" if a > b * 1.01 else "within 1% of"
        groups[key].append(n)
    parts = [f"{key} the paper's Ptr-Net at n = {join(ns)}" for key, ns in groups.items() if ns]
    last = cells[-1].split(" (")[0]
    first_gap, last_gap = _paren(cells[0]).lstrip("+"), _paren(cells[-1]).lstrip("+")
    return (
        f"Our beam-8 tours are {' and '.join(parts)} ({last} against {paper[-1]} at "
        f"n = {sizes[-1]}); against our own reference they are {first_gap} longer "
        f"at n = {sizes[0]} and {last_gap} at n = {sizes[-1]}."
    )


LABELS_ONLY = "self-attention encoder, labels only, greedy"


def tsp_encoders(table: Table) -> str:
    """The served model (the last column) against the LSTM's, and, where the table has it, the
    same model before REINFORCE at the largest n."""
    sizes = column(table, "tested n")
    lstm = column(table, "LSTM encoder, greedy")
    attention = column(table, str(table["columns"][-1]))
    shorter = [n for n, a, b in zip(sizes, attention, lstm, strict=True) if number(a) < number(b)]
    where = "at every n" if shorter == sizes else f"at n = {join(shorter)}" if shorter else ""
    verdict = f"shorter than the LSTM's {where}" if shorter else "no shorter than the LSTM's"
    edge = sizes.index("20") if "20" in sizes else 0  # the edge of the training range

    def gaps(i: int) -> str:
        above = f"{_paren(attention[i])} against {_paren(lstm[i])} above the reference"
        return f"{above} at n = {sizes[i]}"

    sentence = f"The self-attention model's greedy tours are {verdict} ({gaps(edge)}, {gaps(-1)})."
    if LABELS_ONLY in table["columns"]:
        before = _paren(column(table, LABELS_ONLY)[-1])
        sentence += f" Before REINFORCE they were {before} above at n = {sizes[-1]}."
    return sentence


def _paren(cell: str) -> str:
    match = re.search(r"\(([^)]*)\)", cell)
    if match is None:
        raise TakeawayError(f"“{cell}” has no gap in parentheses")
    return match.group(1)


def tsp_baselines(table: Table) -> str:
    columns = list(table["columns"])
    last = table["rows"][-1]
    methods = [
        (name, _paren(cell))
        for name, cell in zip(columns, last, strict=True)
        if not name.startswith(("paper", "tested", "instances", "reference")) and "(" in cell
    ]
    if not methods:
        raise TakeawayError("no method columns with gaps")
    best = min(methods, key=lambda item: number(item[1]))
    worst = max(methods, key=lambda item: number(item[1]))
    return (
        f"At n = {last[0]}, {best[0]} comes closest to the reference ({best[1]}) and "
        f"{worst[0]} is furthest from it ({worst[1]})."
    )


def tsp_reference_check(table: Table) -> str:
    rows = {str(row[0]): row for row in table.get("rows", [])}
    columns = list(table["columns"])
    gap, optimal = columns.index("mean length (gap to optimal)"), columns.index("optimal tours")
    if "OR-Tools" not in rows:
        raise TakeawayError("no OR-Tools row")
    ours = [row for name, row in rows.items() if name.startswith("ours")]
    best = max(ours, key=lambda row: number(row[optimal]))
    return (
        f"The OR-Tools reference is itself {_paren(rows['OR-Tools'][gap]).lstrip('+')} above "
        f"the optimum at n = {rows['OR-Tools'][1]}, so gaps measured against it are lower "
        f"bounds; our best decoder ({best[0]}) finds the optimal tour for {best[optimal]} of "
        "the instances."
    )


def sort(table: Table) -> str:
    sizes = column(table, "tested n")
    greedy = [number(c) for c in column(table, "accuracy (greedy)")]
    beam = [number(c) for c in column(table, "accuracy (beam 8)")]
    high = [n for n, a in zip(sizes, greedy, strict=True) if a >= 95]
    sentence = (
        f"Greedy decoding sorts at least 95% of the sequences exactly up to n = {high[-1]} "
        if high
        else "Greedy decoding sorts fewer than 95% of the sequences exactly at every n "
    )
    sentence += f"and {greedy[-1]:.1f}% at n = {sizes[-1]}; "
    if beam == greedy:
        return sentence + "beam 8 changes nothing at any n."
    gain = max(b - g for b, g in zip(beam, greedy, strict=True))
    return sentence + f"beam 8 adds at most {points(gain)} points."


def sparse_pointer(table: Table) -> str:
    dense = rows_where(table, "pointer", "softmax")
    sparse = [row for row in table.get("rows", []) if row[0] != "softmax"]
    if not dense or len(dense) != len(sparse):
        raise TakeawayError("expected one sparse row per softmax row")
    columns = list(table["columns"])
    acc, support = columns.index("accuracy (greedy)"), columns.index("mean support size")
    candidates = columns.index("candidates per step")
    gains = [number(s[acc]) - number(d[acc]) for d, s in zip(dense, sparse, strict=True)]
    supports = [number(s[support]) for s in sparse]
    verdict = "is as accurate as" if min(gains) >= -1 else "loses accuracy against"
    return (
        f"The sparse pointer ({sparse[0][0]}) {verdict} softmax "
        f"({points(min(gains))} to {points(max(gains))} points) while giving non-zero "
        f"probability to {min(supports):.2f}–{max(supports):.2f} inputs per step, where softmax "
        f"spreads it over all {number(dense[0][candidates]):g}–{number(dense[-1][candidates]):g} "
        "candidates."
    )


def sparse_tsp(table: Table) -> str:
    """The sparse TSP pointer against the softmax one at the largest n: greedy gap and support."""
    columns = list(table["columns"])
    greedy, support = columns.index("greedy (gap to reference)"), columns.index("mean support size")
    rows = [list(map(str, row)) for row in table.get("rows", [])]
    largest = max((row[1] for row in rows), key=int, default=None)
    dense = next((r for r in rows if r[0] == "softmax" and r[1] == largest), None)
    sparse = next((r for r in rows if r[0] != "softmax" and r[1] == largest), None)
    if dense is None or sparse is None:
        raise TakeawayError("expected a softmax and a sparse row at the largest n")
    return (
        f"At n = {largest} the sparse pointer's greedy tours are {_paren(sparse[greedy])} above "
        f"the reference against {_paren(dense[greedy])} for softmax, while a step keeps "
        f"{sparse[support]} cities in its support against {dense[support]}."
    )


def inflection(table: Table) -> str:
    averages = rows_where(table, "language", "average")
    if not averages:
        raise TakeawayError("no average rows")
    columns = list(table["columns"])
    gain = columns.index("1.5 − 1")
    parts = [f"{points(number(row[gain]))} in the {row[0]} setting" for row in averages]
    return (
        "Averaged over the languages, 1.5-entmax against softmax is "
        f"{join(parts)} (accuracy points); the paper reports gains of about one point, "
        "up to 2.5 with little data."
    )


def translation(table: Table) -> str:
    alphas = column(table, list(table["columns"])[0])
    bleu = [number(c) for c in column(table, "BLEU")]
    best = max(range(len(bleu)), key=bleu.__getitem__)
    worst = min(range(len(bleu)), key=bleu.__getitem__)
    softmax = bleu[alphas.index("1")]
    return (
        f"α = {alphas[best]} gives the best BLEU ({bleu[best]:.1f}, "
        f"{points(bleu[best] - softmax)} over softmax) and α = {alphas[worst]} the lowest "
        f"({bleu[worst]:.1f}); the paper's best was also 1.5-entmax."
        if alphas[best] == "1.5"
        else f"α = {alphas[best]} gives the best BLEU ({bleu[best]:.1f}) and α = "
        f"{alphas[worst]} the lowest ({bleu[worst]:.1f}); in the paper 1.5-entmax was best."
    )


def sparsity(table: Table) -> str:
    ours = [row for row in table.get("rows", []) if not str(row[0]).startswith("paper")]
    columns = list(table["columns"])
    exact = columns.index("beam 5 exact")
    softmax = [number(row[exact]) for row in ours if row[1] == "1"]
    sparse = [(row[0], row[1], number(row[exact])) for row in ours if row[1] != "1"]
    if not softmax or not sparse:
        raise TakeawayError("expected softmax and sparse rows")
    best = max(sparse, key=lambda item: item[2])
    worst = min(sparse, key=lambda item: item[2])
    never = "0.0%" if max(softmax) == 0 else f"at most {max(softmax):.1f}%"
    return (
        f"Beam 5 is never exact under softmax ({never}); with sparse α it is "
        f"exact for up to {best[2]:.1f}% of the test inputs ({best[0]}, α = {best[1]}), "
        f"but only {worst[2]:.1f}% for {worst[0]} at α = {worst[1]}."
    )


def inflection_full(table: Table) -> str:
    """The widget's models: held-out accuracy and the irregular pasts, softmax against the
    sparse full model, and what the replay phase changed where there is one."""
    columns = list(table["columns"])
    test = columns.index("test accuracy (7-language average)")
    irregular = next(i for i, name in enumerate(columns) if name.startswith("irregular English"))
    rows = {(str(row[0]), str(row[1])): row for row in table.get("rows", [])}
    softmax, sparse = rows[("full", "1")], rows[("full", "1.5")]
    sentence = (
        f"On held-out lemmas the full models reach {softmax[test]} (softmax) and "
        f"{sparse[test]} (1.5-entmax); of the irregular English pasts they were taught, "
        f"softmax gives back {softmax[irregular]} and 1.5-entmax {sparse[irregular]}"
    )
    mappings = [("1.5-entmax", "1.5", sparse), ("softmax", "1", softmax)]
    if (sparsemax := rows.get(("full", "2"))) is not None:
        sentence += f" (sparsemax: {sparsemax[test]} held out, {sparsemax[irregular]} given back)"
        mappings.append(("sparsemax", "2", sparsemax))
    replays = [
        (name, rows[("full + replay", alpha)], before)
        for name, alpha, before in mappings
        if ("full + replay", alpha) in rows
    ]
    if not replays:
        return sentence + "."
    changes = join(
        [
            f"{replay[irregular]} for {name} (held-out accuracy "
            f"{points(number(replay[test]) - number(before[test]))} points)"
            for name, replay, before in replays
        ]
    )
    sentence = f"{sentence}; the replay phase takes that to {changes}"
    later = []
    for name, alpha, before in mappings:
        rounds = [
            f"round {k} to {rows[key][irregular]} (held-out accuracy "
            f"{points(number(rows[key][test]) - number(before[test]))} points against the full "
            "model)"
            for k in range(2, 10)
            if (key := (f"full + {k} replays", alpha)) in rows
        ]
        if rounds:
            later.append(f"for {name}, {join(rounds)}")
    if not later:
        return sentence + "."
    return f"{sentence}; " + "; ".join(later) + "."


def translation_data(table: Table) -> str:
    """How much larger the widget's corpus is than the tables' one."""
    rows = {str(row[0]): row for row in table.get("rows", [])}
    if not {"v1", "v2"} <= rows.keys():
        raise TakeawayError("expected corpus rows v1 and v2")
    columns = list(table["columns"])
    train, packages = columns.index("train"), columns.index("packages")
    labels = columns.index("one-word training sources")
    v1, v2 = rows["v1"], rows["v2"]
    ratio = number(v2[train]) / number(v1[train])
    return (
        f"Corpus v2 has {ratio:.1f} times v1's training pairs ({v2[train]} from {v2[packages]} "
        f"packages against {v1[train]} from {v1[packages]}), {v2[labels]} of them one-word "
        "labels."
    )


def translation_live(table: Table) -> str:
    """The widget's strongest big model against the v1 model at the same α: BLEU on the test
    sentences they share, and the frequent training sources given back."""
    columns = list(table["columns"])
    bleu = columns.index("BLEU, v1 test set")
    frequent = next(i for i, name in enumerate(columns) if name.endswith("exact"))
    rows = [list(map(str, row)) for row in table.get("rows", [])]
    big = [row for row in rows if row[0].startswith("big")]
    live = next((row for row in big if row[1] == "1.5"), big[0] if big else None)  # the paper's α
    small = next((row for row in rows if row[0] == "v1" and live and row[1] == live[1]), None)
    if live is None or small is None:
        raise TakeawayError("expected a big model and the v1 model at its α")
    return (
        f"At α = {live[1]} the widget's model ({live[0]}) scores {live[bleu]} BLEU on the v1 "
        f"test sentences, against {small[bleu]} for the v1 model "
        f"({points(number(live[bleu]) - number(small[bleu]))} points), and gives back "
        f"{live[frequent]} of its most frequent training sources word for word (the v1 "
        f"model: {small[frequent]} of its own)."
    )


TAKEAWAYS: dict[tuple[str, str], Callable[[Table], str]] = {
    ("pointer", "hull"): hull,
    ("pointer", "tsp"): tsp,
    ("pointer", "tsp-baselines"): tsp_baselines,
    ("pointer", "tsp-encoders"): tsp_encoders,
    ("pointer", "tsp-reference-check"): tsp_reference_check,
    ("pointer", "sort"): sort,
    ("pointer", "sparse-pointer"): sparse_pointer,
    ("pointer", "sparse-tsp"): sparse_tsp,
    ("seq2seq", "inflection"): inflection,
    ("seq2seq", "translation"): translation,
    ("seq2seq", "sparsity"): sparsity,
    ("seq2seq", "inflection-full"): inflection_full,
    ("seq2seq", "translation-data"): translation_data,
    ("seq2seq", "translation-live"): translation_live,
}


def takeaway(source: str, table_id: str, table: Table) -> str | None:
    """The sentence for one of our tables, or None for a table that has none."""
    write = TAKEAWAYS.get((source, table_id))
    if write is None:
        return None
    try:
        return write(table)
    except (TakeawayError, ValueError, IndexError):
        return None
