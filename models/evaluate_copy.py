"""The copy table of `python -m models.evaluate seq2seq --tables copy`: each copy-capable
translation model (models/copy_translation.py) beside the generate-only model it was
fine-tuned from, at the same α, all with beam search of width 5:

- copy fidelity on our copy test set (models/tasks/copy_testset.py): the share of the tokens
  that must pass through unchanged which appear verbatim in the output, over the test split's
  corpus pairs that keep a source token and over template sentences with held-out names,
  numbers, versions, paths, addresses;
- BLEU on corpus v2's test set, and the share of the 500 most frequent training sources given
  back word for word (the translation-live table's yardsticks).

Results are cached in data/eval/copy/ under each checkpoint's sha256.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sacrebleu

from models.checkpoints import CHECKPOINT_DIR, ancestry, load_model, read_manifest
from models.copy_translation import beam_search_pieces, detokenize, source_pieces
from models.eval_cache import cached_results
from models.references import matches_reference
from models.seq2seq import beam_search
from models.seq2seq_run import COPY_SERVED
from models.tasks import translation
from models.tasks.copy_testset import (
    COPY_TESTSET_VERSION,
    copy_fidelity,
    copy_testset,
    testset_sha256,
)
from models.tasks.translation_tokenizers import MAX_TOKENS, load_tokenizers, max_output_length

BEAM = 5
FREQUENT_SOURCES = 500
CORPUS = "v2"

Translate = Callable[[str], str]


def translator(name: str) -> Translate:
    """Beam 5 through a checkpoint of either family: sentence -> best translation."""
    model, entry = load_model(name)
    source_sp, target_sp = load_tokenizers(CHECKPOINT_DIR, CORPUS)
    if entry["family"] == "seq2seq-copy":

        def translate(sentence: str) -> str:
            text = " ".join(sentence.split())
            pieces = source_pieces(text, source_sp, model.config.split_numbers)[:MAX_TOKENS]
            limit = max_output_length(len(pieces))
            return detokenize(
                beam_search_pieces(model, pieces, source_sp, target_sp, BEAM, limit).best
            )

        return translate

    def translate(sentence: str) -> str:
        ids = source_sp.encode(" ".join(sentence.split()))[:MAX_TOKENS]
        result = beam_search(model, ids, BEAM, max_output_length(len(ids)))
        return target_sp.decode(result.hypotheses[0].tokens)

    return translate


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score


def decode_sets(translate: Translate, limit: int = 0) -> dict:
    """Copy fidelity, v2 test BLEU and the frequent sources of one model (`limit` > 0 keeps the
    first `limit` sentences of each set, for tests)."""

    def first(items: list) -> list:
        return items[:limit] if limit else items

    copy_set = first(copy_testset(CORPUS))
    copy_outputs = [translate(example.source) for example in copy_set]
    test = first(translation.build_corpus(corpus=CORPUS)["test"])
    test_outputs = [translate(pair.source) for pair in test]
    frequent = translation.frequent_training_pairs(CORPUS, limit or FREQUENT_SOURCES)
    frequent_outputs = [translate(pair.source) for pair in frequent]
    exact = [
        matches_reference(output, [pair.target])
        for pair, output in zip(frequent, frequent_outputs, strict=True)
    ]
    return {
        "copy": copy_fidelity(copy_set, copy_outputs),
        "copy_testset": {
            "version": COPY_TESTSET_VERSION,
            "sha256": testset_sha256(copy_set),
            "sentences": len(copy_set),
            "must_copy_tokens": sum(len(example.must_copy) for example in copy_set),
        },
        "bleu_v2_test": bleu(test_outputs, [pair.target for pair in test]),
        "frequent_exact": sum(exact) / len(exact),
        "examples": [
            [example.source, output, example.target]
            for example, output in zip(copy_set, copy_outputs, strict=True)
        ][:40],
    }


def model_results(name: str, limit: int = 0) -> dict | None:
    """`decode_sets` for one checkpoint, cached by its sha256; None when it is not trained."""
    return cached_results(
        "copy",
        name,
        f"{limit}-copy{COPY_TESTSET_VERSION}",
        lambda: decode_sets(translator(name), limit),
        "decoding the copy test set, the v2 test set and the frequent sources",
    )


def _row(model: str, alpha: float, results: dict, entry: dict) -> list[str]:
    """A table row; training steps are the generate-only model's over all its runs, and the
    steps a copy model's runs added to them."""
    copy = results["copy"]
    runs = [entry, *ancestry(entry, CHECKPOINT_DIR)]
    if entry.get("family") == "seq2seq-copy":
        added = sum(e.get("steps", 0) for e in runs if e.get("family") == "seq2seq-copy")
        steps = f"+{added:,}"
    else:
        steps = f"{sum(e.get('steps', 0) for e in runs):,}"
    return [
        model,
        f"{alpha:g}",
        f"{copy['copy_fidelity']:.1f}%",
        f"{copy['copy_fidelity_corpus']:.1f}%",
        f"{copy['copy_fidelity_template']:.1f}%",
        f"{results['bleu_v2_test']:.1f}",
        f"{100 * results['frequent_exact']:.1f}%",
        steps,
    ]


def row_checkpoints(manifest: dict) -> dict[tuple[str, float], str]:
    """(model column, α) -> checkpoint for the table's rows: each served copy model and the
    generate-only model it was fine-tuned from (its nearest ancestor that is no copy model: a
    copy model may continue another's run)."""
    rows = {}
    for alpha, name in COPY_SERVED.items():
        if name in manifest:
            parents = ancestry(manifest[name], CHECKPOINT_DIR)
            base = next(p for p in parents if p.get("family") != "seq2seq-copy")
            rows["generate only", alpha] = base["checkpoint"]
            rows["copy", alpha] = name
    return rows


def copy_table(limit: int = 0) -> dict | None:
    """Generate-only and copy rows per α that has a copy model; None while none is trained."""
    manifest = read_manifest(CHECKPOINT_DIR)
    rows, sets = [], None
    for (model, alpha), checkpoint in row_checkpoints(manifest).items():
        if checkpoint in manifest:
            results = model_results(checkpoint, limit)
            sets = results["copy_testset"]
            rows.append(_row(model, alpha, results, manifest[checkpoint]))
    if not rows:
        return None
    return {
        "caption": "Copying: the copy-capable translation models beside the generate-only "
        "models they started from (beam 5)",
        "columns": [
            "model",
            "α",
            "copy fidelity",
            "copy fidelity, corpus pairs",
            "copy fidelity, templates",
            "BLEU, v2 test set",
            f"{FREQUENT_SOURCES} most frequent training sources, exact",
            "training steps",
        ],
        "rows": rows,
        "note": f"Copy test set v{sets['version']} ({sets['sentences']:,} sentences, "
        f"{sets['must_copy_tokens']:,} tokens that must pass through unchanged; "
        "models/tasks/copy_testset.py): the v2 test pairs whose reference keeps a source token "
        "verbatim, and template sentences whose names, numbers, percentages, versions, paths, "
        "URLs, e-mail and IP addresses are drawn from values no training sentence holds. Copy "
        "fidelity: the share of those tokens found verbatim in the output. Training steps: the "
        "generate-only model's over its runs (the big model, then its replay phase), and "
        "the steps each copy model added, starting from those weights, on the v2 training "
        "pairs plus template sentences with training values.",
    }
