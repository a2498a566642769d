"""One plain sentence under each of our results tables, computed from the table's own cells
(content/results/<source>.json), so the sentence stays true when the numbers are regenerated.

Each function takes a table (`columns`, `rows` of display strings) and returns a sentence.
A table whose columns no longer match raises `TakeawayError`; the table then shows without
a takeaway, and tests/test_result_takeaways.py fails so the sentence gets fixed.

Every comparison states its direction and size ("3.5 to 13.4 points above the paper's"), so a
sentence cannot say "within" or "ahead" where the cells say otherwise.
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
    columns = list(table["columns"])
    if name not in columns:
        raise TakeawayError(f"no column “{name}”")
    index = columns.index(name)
    return [str(row[index]) for row in table["rows"]]


def rows_where(table: Table, name: str, value: str) -> list[Sequence[str]]:
    index = list(table["columns"]).index(name)
    return [row for row in table["rows"] if str(row[index]) == value]


def points(value: float) -> str:
    """A difference in percentage points, signed, without a "-0.0"."""
    rounded = round(value, 1)
    return "±0.0" if rounded == 0 else f"{rounded:+.1f}".replace("-", "−")


def join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def span(values: Sequence[float], unit: str = "points") -> str:
    """ "3.5 to 13.4 points", or "3.5 points" for one value (magnitudes; the caller says which
    way)."""
    low, high = min(map(abs, values)), max(map(abs, values))
    return (
        f"{low:.1f} {unit}"
        if round(low, 1) == round(high, 1)
        else f"{low:.1f} to {high:.1f} {unit}"
    )


def compared(
    sizes: Sequence[str], ours: Sequence[float], theirs: Sequence[float], whom: str
) -> list[str]:
    """Ours against theirs, grouped by direction: "3.5 to 13.4 points above the paper's at
    n = 5, 10 and 50", "equal to it at n = 200", "1.2 points below it at n = 100"."""
    groups: dict[str, list[tuple[str, float]]] = {"above": [], "equal": [], "below": []}
    for n, a, b in zip(sizes, ours, theirs, strict=True):
        difference = round(a - b, 1)
        key = "above" if difference > 0 else "below" if difference < 0 else "equal"
        groups[key].append((n, difference))
    parts, named = [], False
    for key, found in groups.items():
        if not found:
            continue
        target = whom if not named else "it"
        where = f"at n = {join([n for n, _ in found])}"
        if key == "equal":
            parts.append(f"equal to {target} {where}")
        else:
            parts.append(f"{span([d for _, d in found])} {key} {target} {where}")
        named = True
    return parts


def hull(table: Table) -> str:
    sizes = column(table, "tested n")
    ours = [number(c) for c in column(table, "accuracy (beam 8)")]
    paper = [number(c) for c in column(table, "paper accuracy")]
    parts = compared(sizes, ours, paper, "the paper's")
    return f"Our beam-8 accuracy is {'; '.join(parts)}."


def tsp(table: Table) -> str:
    sizes = column(table, "tested n")
    cells = column(table, "ours beam 8")
    paper = column(table, "paper Ptr-Net")
    groups: dict[str, list[str]] = {"within 1% of": [], "shorter than": [], "longer than": []}
    for n, ours, theirs in zip(sizes, cells, paper, strict=True):
        a, b = number(ours), number(theirs)
        key = "shorter than" if a < b * 0.99 else "longer than" if a > b * 1.01 else "within 1% of"
        groups[key].append(n)
    found = [(key, ns) for key, ns in groups.items() if ns]
    parts = [
        f"{key} the paper's at n = {join(ns)}" if i == 0 else f"{key.split()[0]} at n = {join(ns)}"
        for i, (key, ns) in enumerate(found)
    ]
    last = cells[-1].split(" (")[0]
    return (
        f"Our beam-8 tours are {' and '.join(parts)} ({last} against {paper[-1]} at "
        f"n = {sizes[-1]})."
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
    verdict = (
        f"shorter than the LSTM's {where} (gap to the reference)"
        if shorter
        else "no shorter than the LSTM's (gap to the reference)"
    )
    edge = sizes.index("20") if "20" in sizes else 0  # the edge of the training range

    def gaps(i: int) -> str:
        return f"{_paren(attention[i])} against {_paren(lstm[i])} at n = {sizes[i]}"

    sentence = f"The self-attention model's greedy tours are {verdict}: {gaps(edge)}, {gaps(-1)}"
    if LABELS_ONLY in table["columns"]:
        sentence += f" (before REINFORCE: {_paren(column(table, LABELS_ONLY)[-1])})"
    return sentence + "."


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
    rows = {str(row[0]): row for row in table["rows"]}
    columns = list(table["columns"])
    gap, optimal = columns.index("mean length (gap to optimal)"), columns.index("optimal tours")
    reference = next((row for name, row in rows.items() if name.startswith("best solver")), None)
    reference = reference or rows.get("OR-Tools")
    if reference is None:
        raise TakeawayError("no reference row")
    ours = [row for name, row in rows.items() if name.startswith("ours")]
    best = max(ours, key=lambda row: number(row[optimal]))
    return (
        f"The TSP table's reference averages {_paren(reference[gap])} against the optimum at "
        f"n = {reference[1]}; our best decoder ({best[0]}) finds the optimal tour for "
        f"{best[optimal]} of the instances."
    )


def sort(table: Table) -> str:
    sizes = column(table, "tested n")
    greedy = [number(c) for c in column(table, "accuracy (greedy)")]
    beam = [number(c) for c in column(table, "accuracy (beam 8)")]
    high = 0  # how many sizes from the smallest up all reach 95%
    while high < len(sizes) and greedy[high] >= 95:
        high += 1
    sentence = (
        f"Greedy decoding sorts at least 95% of the sequences exactly up to n = {sizes[high - 1]} "
        if high
        else f"Greedy decoding sorts fewer than 95% of the sequences exactly at n = {sizes[0]} "
    )
    sentence += f"and {greedy[-1]:.1f}% at n = {sizes[-1]}; "
    gains = [b - g for b, g in zip(beam, greedy, strict=True)]
    if all(round(gain, 1) == 0 for gain in gains):
        return sentence + "beam 8 changes nothing at any n."
    return sentence + f"beam 8 changes it by {points(min(gains))} to {points(max(gains))} points."


def sparse_pointer(table: Table) -> str:
    dense = rows_where(table, "pointer", "softmax")
    sparse = [row for row in table["rows"] if row[0] != "softmax"]
    if not dense or len(dense) != len(sparse):
        raise TakeawayError("expected one sparse row per softmax row")
    columns = list(table["columns"])
    acc, support = columns.index("accuracy (greedy)"), columns.index("mean support size")
    candidates = columns.index("candidates per step")
    gains = [number(s[acc]) - number(d[acc]) for d, s in zip(dense, sparse, strict=True)]
    supports = [number(s[support]) for s in sparse]
    return (
        f"Against softmax, the sparse pointer ({sparse[0][0]}) is {points(min(gains))} to "
        f"{points(max(gains))} points in accuracy, with non-zero probability on "
        f"{min(supports):.2f}–{max(supports):.2f} inputs per step where softmax keeps all "
        f"{number(dense[0][candidates]):g}–{number(dense[-1][candidates]):g} candidates."
    )


def sparse_tsp(table: Table) -> str:
    """The sparse TSP pointer against the softmax one at the largest n: greedy gap and support."""
    columns = list(table["columns"])
    greedy, support = columns.index("greedy (gap to reference)"), columns.index("mean support size")
    rows = [list(map(str, row)) for row in table["rows"]]
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
    ours = [row for row in table["rows"] if not str(row[0]).startswith("paper")]
    columns = list(table["columns"])
    exact = columns.index("beam 5 exact")
    softmax = [number(row[exact]) for row in ours if row[1] == "1"]
    sparse = [(row[0], row[1], number(row[exact])) for row in ours if row[1] != "1"]
    if not softmax or not sparse:
        raise TakeawayError("expected softmax and sparse rows")
    best = max(sparse, key=lambda item: item[2])
    worst = min(sparse, key=lambda item: item[2])
    under_softmax = (
        "is never exact under softmax"
        if max(softmax) == 0
        else f"is exact for at most {max(softmax):.1f}% of inputs under softmax"
    )
    return (
        f"Beam 5 {under_softmax}; with sparse α it is exact for up to {best[2]:.1f}% of the "
        f"test inputs ({best[0]}, α = {best[1]}) and {worst[2]:.1f}% for {worst[0]} at "
        f"α = {worst[1]}."
    )


def inflection_full(table: Table) -> str:
    """The widget's full models (the first full row of each α, the most replayed) against the
    tables' high models, held out."""
    columns = list(table["columns"])
    test = columns.index("test accuracy (7-language average)")
    rows = [list(map(str, row)) for row in table["rows"]]
    high = {row[1]: row for row in rows if row[0] == "high"}
    full: dict[str, list[str]] = {}
    for row in rows:
        if row[0].startswith("full"):
            full.setdefault(row[1], row)
    alphas = sorted((alpha for alpha in full if alpha in high), key=float)
    if not alphas or "1" not in alphas:
        raise TakeawayError("expected full and high rows for softmax and a sparse α")
    names = {"1": "softmax", "1.5": "1.5-entmax", "2": "sparsemax"}
    reached = join([f"{full[a][test]} ({names.get(a, f'α = {a}')})" for a in alphas])
    gains = [number(full[a][test]) - number(high[a][test]) for a in alphas]
    direction = "above" if min(gains) > 0 else "below" if max(gains) < 0 else "from"
    sentence = (
        f"Held out, the widget's models reach {reached}, {span(gains)} {direction} the high models"
    )
    if "1.5" in alphas:
        gap = number(full["1.5"][test]) - number(full["1"][test])
        sentence += f"; 1.5-entmax is {points(gap)} points against softmax"
    return sentence + "."


def translation_data(table: Table) -> str:
    """How much larger the widget's corpus is than the tables' one."""
    rows = {str(row[0]): row for row in table["rows"]}
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
    """Per kind of model (big + replay, v1, ...): the α with the best BLEU on the v1 test
    sentences, which every model shares, and its difference from softmax."""
    columns = list(table["columns"])
    bleu = columns.index("BLEU, v1 test set")
    groups: dict[str, dict[str, float]] = {}
    for row in table["rows"]:
        groups.setdefault(str(row[0]), {})[str(row[1])] = number(row[bleu])
    parts = []
    for model, scores in groups.items():
        if "1" not in scores or len(scores) < 2:
            continue
        best = max(scores, key=scores.__getitem__)
        versus = (
            "softmax itself"
            if best == "1"
            else f"{points(scores[best] - scores['1'])} against softmax"
        )
        parts.append(f"α = {best} among the {model} models ({scores[best]:.1f}, {versus})")
    if not parts:
        raise TakeawayError("expected softmax and another α for some model")
    return f"Best BLEU on the v1 test sentences: {join(parts)}."


COPY_MEASURES = (  # (column, subject, its verb: (rises, holds, falls))
    ("BLEU, v2 test set", "BLEU", ("rises", "holds", "falls")),
    ("500 most frequent training sources, exact", "frequent sources", ("rise", "hold", "fall")),
)


def copy(table: Table) -> str:
    """Per α with a copy model: its copy fidelity against the generate-only model it started
    from (before → after), then where BLEU and the frequent sources rise, hold or fall."""
    fidelity, paired = [], []
    moves: dict[str, dict[str, list[str]]] = {subject: {} for _, subject, _ in COPY_MEASURES}
    for alpha in dict.fromkeys(column(table, "α")):
        rows = {str(row[0]): row for row in rows_where(table, "α", alpha)}
        if not {"generate only", "copy"} <= rows.keys():
            continue
        parent, child = rows["generate only"], rows["copy"]
        index = list(table["columns"]).index("copy fidelity")
        number(child[index])  # a cell without a number is no table to read
        fidelity.append(f"{parent[index]} → {child[index]}")
        paired.append(alpha)
        for name, subject, verbs in COPY_MEASURES:
            index = list(table["columns"]).index(name)
            before, after = number(parent[index]), number(child[index])
            verb = verbs[0] if after > before else verbs[1] if after == before else verbs[2]
            moves[subject].setdefault(verb, []).append(alpha)
    if not fidelity:
        raise TakeawayError("expected a generate-only and a copy row at some α")
    clauses = []
    for subject, by in moves.items():
        if len(by) == 1 and len(fidelity) > 1:  # one verb for all
            clauses.append(f"{subject} {next(iter(by))} at every α")
        else:
            where = [f"{verb} at {join(alphas)}" for verb, alphas in by.items()]
            clauses.append(f"{subject} {', '.join(where)}".replace(" at ", " at α = ", 1))
    return (
        f"Copy fidelity, parent → copy model, at α = {join(paired)}: {', '.join(fidelity)}; "
        f"{'; '.join(clauses)}."
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
    ("seq2seq", "copy"): copy,
}


def takeaway(source: str, table_id: str, table: Table) -> str | None:
    """The sentence for one of our tables, or None for a table that has none (or no rows)."""
    write = TAKEAWAYS.get((source, table_id))
    if write is None or not table.get("rows"):
        return None
    try:
        return write(table)
    except (TakeawayError, ValueError, LookupError):
        return None
