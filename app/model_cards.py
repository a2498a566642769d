"""Model cards: one entry per served checkpoint of a paper (`/papers/<slug>/models`), built from
the checkpoint manifest, its lineage and the results JSON, so nothing on a card is typed by hand.

What serves is `models.<family>_run.SERVED`; a card's round-by-round history is
`models.checkpoints.ancestry` (the runs each checkpoint was fine-tuned from, nearest first);
what it scores are the rows of content/results/<source>.json that this checkpoint produced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models import pointer_run, seq2seq_run
from models.checkpoints import ancestry
from models.evaluate_seq2seq import model_name as seq2seq_model_name

# paper slug -> the results file (and serving family) its models belong to
PAPER_SOURCES: dict[str, str] = {
    "pointer-networks": "pointer",
    "sparse-seq2seq": "seq2seq",
    "attention-routing": "attention-routing",
}
MAPPINGS = {"softmax": 1.0, "entmax15": 1.5, "sparsemax": 2.0}


@dataclass(frozen=True)
class Round:
    """One training run of a checkpoint's history: from scratch, or fine-tuned from the last."""

    checkpoint: str
    steps: str
    batch: str
    wall_time: str
    learning_rate: str
    dev: str
    replay: str


@dataclass(frozen=True)
class ResultRows:
    table_id: str
    caption: str
    columns: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class ModelCard:
    name: str
    task: str
    alpha: str
    is_default: bool
    what: list[tuple[str, str]]
    data: list[tuple[str, str]]
    rounds: list[Round]
    total: tuple[str, str]  # steps, wall time over every round
    resumes: str
    results: list[ResultRows]
    differences: list[tuple[str, str, str]]  # aspect, the paper, ours
    sha256: str
    size: str
    command: str


def served(source: str) -> list[tuple[str, float, str, bool]]:
    """(task, α, checkpoint, is the task's default) for every served checkpoint of a family."""
    if source in ("pointer", "attention-routing"):  # one serving table, two papers' models
        kool = source == "attention-routing"
        return [
            (task, pointer_run.trained_alpha(name), name, index == 0)
            for task, names in pointer_run.SERVED.items()
            for index, name in enumerate(
                name for name in names if pointer_run.is_attention_model(name) == kool
            )
        ]
    generate_only = [
        (task, alpha, name, alpha == seq2seq_run.DEFAULT_ALPHA)
        for task, by_alpha in seq2seq_run.SERVED.items()
        for alpha, name in by_alpha.items()
    ]
    copying = [("translation", a, name, False) for a, name in seq2seq_run.COPY_SERVED.items()]
    return generate_only + copying


def minutes(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    total = round(seconds / 60)
    return f"{total} min" if total < 60 else f"{total // 60} h {total % 60:02d} min"


def metric(name: str, value: object) -> str:
    """A manifest metric as a reader reads it: accuracies and gaps as percentages."""
    if not isinstance(value, int | float):
        return f"{name} {value}"
    label = name.replace("_", " ")
    if any(word in name for word in ("accuracy", "gap", "area", "failure")) and abs(value) <= 1:
        return f"{label} {value * 100:.1f}%"
    return f"{label} {value:.3f}" if isinstance(value, float) else f"{label} {value:,}"


def replay_text(data: Mapping[str, Any]) -> str:
    replay = data.get("replay")
    if not isinstance(replay, dict):
        return "—"
    if "frequent_sources" in replay:
        return f"the {replay['frequent_sources']:,} most frequent sources, ×{replay['copies']} more"
    wrong = replay.get("cells_wrong_before", replay.get("pairs_wrong_before"))
    unit = "cells" if "cells_wrong_before" in replay else "pairs"
    sources = replay.get("from")
    count = len(sources) if isinstance(sources, list) else 1
    models = "model" if count == 1 else "models"
    return f"{wrong:,} {unit} that {count} earlier {models} got wrong, ×{replay.get('copies')} more"


def round_of(entry: Mapping[str, Any], name: str) -> Round:
    batch = entry.get("batch_size")
    world = entry.get("world_size", 1)
    optimizer = entry.get("optimizer") or {}
    metrics = entry.get("metrics") or {}
    return Round(
        checkpoint=name,
        steps=f"{entry['steps']:,}" if "steps" in entry else "—",
        batch=("—" if batch is None else f"{batch}" if world == 1 else f"{world} × {batch}"),
        wall_time=minutes(entry.get("wall_time_s")),
        learning_rate=f"{optimizer['lr']:g}" if "lr" in optimizer else "—",
        dev=", ".join(metric(k, v) for k, v in metrics.items()) or "—",
        replay=replay_text(entry.get("data") or {}),
    )


def history(entry: Mapping[str, Any], name: str, directory: Path) -> list[Round]:
    """Every run behind a checkpoint, first run first, the checkpoint's own run last."""
    parents = ancestry(dict(entry), directory)
    runs = [round_of(parent, parent.get("checkpoint", "?")) for parent in reversed(parents)]
    return [*runs, round_of(entry, name)]


def total(entry: Mapping[str, Any], directory: Path) -> tuple[str, str]:
    chain = [*ancestry(dict(entry), directory), entry]
    steps = sum(e.get("steps", 0) for e in chain)
    wall = sum(e.get("wall_time_s", 0.0) for e in chain)
    return f"{steps:,}", minutes(wall)


def describe(value: object) -> str:
    """A manifest data field on one line."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return str(value[0]) if value[0] == value[1] else f"{value[0]}–{value[1]}"
    if isinstance(value, list):
        return ", ".join(map(str, value)) if len(value) <= 4 else f"{len(value):,} pinned packages"
    if isinstance(value, dict) and "what" in value:
        return str(value["what"])
    if isinstance(value, dict) and all(isinstance(v, int) for v in value.values()):
        return " · ".join(f"{k} {v:,}" for k, v in value.items())
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, dict):  # per split, per language: the split's total
        return " · ".join(
            f"{k} {sum(v.values()):,}" for k, v in value.items() if isinstance(v, dict)
        )
    return f"{value:,}" if isinstance(value, int) else str(value)


DATA_LABELS = {
    "n_range": "sizes (n)",
    "corpus_sha256": "corpus sha256",
    "training_pairs": "training pairs (with repeats)",
    "full": "training set",
    "loss": "loss",
}
SKIPPED_DATA = {"replay", "vocab_file", "tokenizers"}


def data_terms(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    data = entry.get("data") or {}
    return [
        (DATA_LABELS.get(key, key.replace("_", " ")), describe(value))
        for key, value in data.items()
        if key not in SKIPPED_DATA
    ]


def pointer_what(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    config = entry["config"]
    if config.get("encoder") == "attention":
        encoder = f"self-attention, {config['encoder_layers']} layers, {config['heads']} heads"
    else:
        encoder = "bidirectional LSTM" if config.get("bidirectional") else "LSTM"
    decoder = "LSTM with one glimpse" if config.get("glimpse") else "LSTM"
    return [
        ("encoder", encoder),
        ("decoder", decoder),
        ("hidden size", str(config["hidden"])),
        ("pointer", f"{config['pointer']} (α = {MAPPINGS.get(config['pointer'], 1.0):g})"),
        ("end position", "yes" if config.get("end_position") else "no"),
        ("parameters", f"{entry['parameters']:,}"),
    ]


def seq2seq_what(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    config = entry["config"]
    layers = config.get("encoder_layers", 1)
    return [
        ("encoder", f"bidirectional LSTM, {layers} layer{'s' if layers > 1 else ''}"),
        ("decoder", "LSTM with global attention and input feeding"),
        ("hidden size", str(config["hidden"])),
        ("embedding size", str(config["emb_dim"])),
        ("attention α", f"{config['attn_alpha']:g}"),
        ("output α", f"{config['out_alpha']:g}"),
        ("vocabulary", f"{config['src_vocab']:,} source, {config['tgt_vocab']:,} target"),
        *COPY_TERMS.get(entry.get("family"), []),
        *([SPLIT_NUMBERS] if config.get("split_numbers") else []),
        *([COPY_SPANS] if config.get("copy_spans") else []),
        ("parameters", f"{entry['parameters']:,}"),
    ]


COPY_TERMS = {
    "seq2seq-copy": [
        (
            "copying",
            "one α-entmax over [vocabulary; source positions]: each step generates a piece or "
            "points at a source position and emits its piece",
        ),
        ("loss", "Fenchel–Young, against the gold piece spread over every entry that writes it"),
    ]
}


COPY_SPANS = (
    "following a span",
    "the next step's input adds the encoder states of the positions the last piece was copied "
    "from (CopyNet's selective read), and a piece that continues a copied run is trained to "
    "point at that run's next position",
)
SPLIT_NUMBERS = (
    "source pieces",
    "a piece that joins digits to other characters is cut where they meet (“0%” → “0” “%”), so "
    "the pointer can copy a whole number",
)


def pointer_differences(entry: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Where the card's model departs from Vinyals et al. (2015); the paper's side is its text."""
    config, optimizer = entry["config"], entry.get("optimizer") or {}
    what = dict(pointer_what(entry))
    sizes = describe((entry.get("data") or {}).get("n_range", "—"))
    rows = [
        ("encoder", "one-layer LSTM", what["encoder"]),
        ("decoder", "LSTM, no glimpse", what["decoder"]),
        ("hidden size", "256 or 512", str(config["hidden"])),
        (
            "optimiser",
            "SGD, learning rate 1.0, batch 128",
            f"{optimizer.get('name')}, batch "
            f"{entry.get('batch_size', 0) * entry.get('world_size', 1)}",
        ),
        ("training data", "1M fixed pairs", (entry.get("data") or {}).get("source", "—")),
        ("training sizes", "hull 5–50, TSP 5–20", sizes),
    ]
    if config["pointer"] != "softmax":
        rows.append(("pointer", "softmax", what["pointer"]))
    if loss := (entry.get("data") or {}).get("loss"):
        rows.append(("loss", "cross-entropy on exact solutions", str(loss)))
    return rows


def seq2seq_differences(entry: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Where the card's model departs from Peters et al. (2019)."""
    data, optimizer = entry.get("data") or {}, entry.get("optimizer") or {}
    task = entry.get("task")
    paper_data = (
        "SIGMORPHON 2018, 100+ languages"
        if task == "inflection"
        else "WMT/IWSLT/KFTT, DE↔EN, JA↔EN, RO↔EN"
    )
    return [
        ("data", paper_data, str(data.get("source", "—"))),
        ("toolkit", "OpenNMT-py", "models/seq2seq.py (this repository)"),
        ("optimiser", "OpenNMT-py's Adam", str(optimizer.get("schedule", "—"))),
        (
            "size",
            "the paper's OpenNMT-py models",
            f"hidden {entry['config']['hidden']}, "
            f"{entry['parameters']:,} parameters, one CPU thread",
        ),
    ]


def routing_what(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    config = entry["config"]
    return [
        ("encoder", f"{config['layers']} attention layers, {config['heads']} heads, batch norm"),
        ("decoder", "context [graph; first; last city], one glimpse, C · tanh compatibility"),
        ("embedding size", str(config["embed_dim"])),
        ("feed-forward hidden", str(config["ff_hidden"])),
        ("clip C", f"{config['tanh_clip']:g}"),
        ("parameters", f"{entry['parameters']:,}"),
    ]


def routing_differences(entry: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Where the card's model departs from Kool et al. (2019)."""
    batch, steps = entry.get("batch_size", 0), entry.get("steps", 0)
    parent = (entry.get("init_from") or {}).get("checkpoint")
    start = f"the weights of {parent}, no warm-up epoch" if parent else "the same"
    return [
        ("training", "100 epochs × 2,500 steps × batch 512", f"{steps:,} steps × batch {batch}"),
        ("start", "random weights; a moving-average baseline in the first epoch", start),
        ("hardware", "one GPU", "one CPU core, shared"),
        ("baseline", "greedy rollout, t-test on 10,000 instances", "the same"),
    ]


# source -> (what it is, how it differs from the paper)
DESCRIBE: dict[str, tuple[Callable[..., list], Callable[..., list]]] = {
    "pointer": (pointer_what, pointer_differences),
    "seq2seq": (seq2seq_what, seq2seq_differences),
    "attention-routing": (routing_what, routing_differences),
}


def pointer_results(
    task: str, name: str, entry: Mapping[str, Any], is_default: bool, tables: Mapping[str, Any]
) -> list[ResultRows]:
    """The rows a pointer model produced (models/evaluate_pointer.py: the hull, sort and TSP
    tables run the task's default model; the dense-vs-sparse tables name the mapping)."""
    whole = {"hull": ("hull",), "tsp": ("tsp", "tsp-reference-check"), "sort": ("sort",)}
    found = []
    for table_id in whole.get(task, ()) if is_default else ():
        table = tables.get(table_id)
        if table is None:
            continue
        rows = table["rows"]
        if table_id == "tsp-reference-check":
            rows = [row for row in rows if str(row[0]).startswith("ours")]
        found.append(ResultRows(table_id, table.get("caption", ""), table["columns"], rows))
    encoders = tables.get("tsp-encoders")
    if task == "tsp" and is_default and encoders:
        keep = [0, 1, 2, len(encoders["columns"]) - 1]  # n, instances, reference, this model
        found.append(
            ResultRows(
                "tsp-encoders",
                encoders.get("caption", ""),
                [encoders["columns"][i] for i in keep],
                [[row[i] for i in keep] for row in encoders["rows"]],
            )
        )
    sparse = tables.get("sparse-pointer")
    if task == "sort" and sparse:
        rows = [row for row in sparse["rows"] if row[0] == entry["config"]["pointer"]]
        if rows:
            found.append(
                ResultRows("sparse-pointer", sparse.get("caption", ""), sparse["columns"], rows)
            )
    return found


def seq2seq_results(
    task: str, name: str, entry: Mapping[str, Any], is_default: bool, tables: Mapping[str, Any]
) -> list[ResultRows]:
    """The rows whose (setting, α) name this checkpoint (models.evaluate_seq2seq.model_name)."""
    found = []
    for table_id in ("inflection-full", "translation-live", "copy"):
        table = tables.get(table_id)
        if table is None:
            continue
        rows = []
        for row in table["rows"]:
            try:
                alpha = float(row[1])
            except (TypeError, ValueError):
                continue
            if row_checkpoint(table_id, task, alpha, str(row[0])) == name:
                rows.append(row)
        if rows:
            found.append(ResultRows(table_id, table.get("caption", ""), table["columns"], rows))
    return found


def row_checkpoint(table_id: str, task: str, alpha: float, model: str) -> str | None:
    """The checkpoint a seq2seq results row names by its model column and α."""
    if table_id == "copy":
        # each copy model is fine-tuned from the generate-only model served at its α
        served = seq2seq_run.COPY_SERVED if model == "copy" else seq2seq_run.SERVED["translation"]
        return served.get(alpha)
    return seq2seq_model_name(task, alpha, model)


def routing_results(
    task: str, name: str, entry: Mapping[str, Any], is_default: bool, tables: Mapping[str, Any]
) -> list[ResultRows]:
    """The rows whose last column, the checkpoint, is this one
    (models/evaluate_attention_routing.py)."""
    found = []
    for table_id in ("tsp", "training"):
        table = tables.get(table_id)
        rows = [row for row in table["rows"] if row[-1] == name] if table else []
        if rows:
            found.append(ResultRows(table_id, table.get("caption", ""), table["columns"], rows))
    return found


RESULTS = {
    "pointer": pointer_results,
    "seq2seq": seq2seq_results,
    "attention-routing": routing_results,
}


def resumes_text(entry: Mapping[str, Any]) -> str:
    resumes = entry.get("resumes")
    if not resumes:
        return "none recorded in the manifest"
    return "; ".join(map(str, resumes)) if isinstance(resumes, list) else str(resumes)


def build_cards(
    slug: str, manifest: Mapping[str, Any], results: Mapping[str, Any], directory: Path
) -> list[ModelCard]:
    """A card for every served checkpoint of the paper; a checkpoint missing from the manifest
    gets none (the page says which are missing)."""
    source = PAPER_SOURCES[slug]
    what, differences = DESCRIBE[source]
    tables = results.get("tables", {})
    cards = []
    for task, alpha, name, is_default in served(source):
        entry = manifest.get(name)
        if entry is None:
            continue
        cards.append(
            ModelCard(
                name=name,
                task=task,
                alpha=f"{alpha:g}",
                is_default=is_default,
                what=what(entry),
                data=data_terms(entry),
                rounds=history(entry, name, directory),
                total=total(entry, directory),
                resumes=resumes_text(entry),
                results=RESULTS[source](task, name, entry, is_default, tables),
                differences=differences(entry),
                sha256=str(entry.get("sha256", "")),
                size=f"{entry.get('size_bytes', 0) / 1e6:.1f} MB",
                command=str(entry.get("command", "")),
            )
        )
    return cards


def missing(slug: str, manifest: Mapping[str, Any]) -> list[str]:
    return [name for _, _, name, _ in served(PAPER_SOURCES[slug]) if name not in manifest]
