"""Result tables for the sparse seq2seq models: `python -m models.evaluate seq2seq`.

Every test input is decoded with beam search (width 5, as in the paper's morphology runs) by
each trained model; what the beam search records gives every number:

- inflection: accuracy (the best hypothesis is one of the cell's valid forms) per language and
  setting, for each alpha;
- translation: corpus BLEU (sacrebleu, default 13a tokenisation) on the held-out test set;
- sparsity: mean attention support and output support per decoding step of the best
  hypothesis, the share of inputs whose whole probability mass is on one sequence, and the
  share where beam 5 was provably exact;
- inflection-full (written once a ``seq2seq-inflect-full-a*`` checkpoint exists): the live
  widget's full models beside the high ones — test accuracy, the share of training cells given
  back (``inflection.reproduction_sets``: a fixed 5,000-cell sample of the full training set,
  every irregular English past and participle, every German plural with umlaut) and the
  sparsity statistics.

Per-model results are cached in data/eval/seq2seq/ under the checkpoint's sha256, so tables can
be rebuilt one at a time (``--tables``) without decoding again.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import math
import re
import statistics
from collections import Counter, defaultdict

import sacrebleu
import torch

from models.checkpoints import CHECKPOINT_DIR, read_manifest
from models.eval_cache import cached_results, log
from models.evaluate_copy import copy_table
from models.recipes import RECIPES
from models.references import matches_reference
from models.seq2seq import beam_search
from models.seq2seq_run import DEFAULT_ALPHA, SERVED
from models.tasks import (
    inflection,
    inflection_serving,
    inflection_vocab,
    translation,
    translation_serving,
    translation_tokenizers,
)

ALPHAS = (1.0, 1.5, 2.0)
BEAM = 5
SINGLE_SEQUENCE_MASS = 1 - 1e-6


def model_name(task: str, alpha: float, setting: str = "high") -> str:
    """The checkpoint of a task, α and setting: inflection high, medium, full, or "full +
    replay", "full + 2 replays", ... (the full model after that many replay rounds,
    models.recipes._inflect_full_replay);
    translation "big", "big + replay" (models.recipes._translate_big, _translate_big_replay) or
    any other word for the v1 models."""
    label = f"{alpha:g}"
    if task != "inflection":
        names = {"big": f"big-a{label}", "big + replay": f"big-a{label}-replay"}
        return f"seq2seq-translate-{names.get(setting, f'a{label}')}"
    if setting == "high":
        return f"seq2seq-inflect-a{label}"
    replayed = re.fullmatch(r"full \+ (?:(\d+) )?replays?", setting)
    if replayed:
        rounds = int(replayed[1] or 1)
        return f"seq2seq-inflect-full-a{label}-replay{rounds if rounds > 1 else ''}"
    return f"seq2seq-inflect-{setting}-a{label}"


def replay_setting(rounds: int) -> str:
    return "full + replay" if rounds == 1 else f"full + {rounds} replays"


# the most replay rounds a full model has had: the highest -replay<k> recipe (models/recipes.py)
REPLAY_ROUNDS = max(
    int(found[1] or 1)
    for name in RECIPES
    if (found := re.fullmatch(r"seq2seq-inflect-full-a[\d.]+-replay(\d*)", name))
)
# the rows of the inflection-full table, in order
FULL_TABLE_SETTINGS = (
    *(replay_setting(k) for k in range(REPLAY_ROUNDS, 0, -1)),
    "full",
    "high",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tables",
        default="inflection,translation,sparsity,data,training,inflection-full,translation-live,copy",
    )
    parser.add_argument("--limit", type=int, default=0, help="test inputs per model (0: all)")
    parser.add_argument("--threads", type=int, default=1)


def _percent(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def _decode_record(result, source_len: int) -> dict:
    """What one beam search says about sparsity, for the best hypothesis's steps."""
    best = result.hypotheses[0]
    return {
        "exact": result.exact,
        "single": math.exp(best.log_prob) >= SINGLE_SEQUENCE_MASS,
        "steps": len(result.output),
        "attention_support": sum(int((a > 0).sum()) for a in result.attention),
        "output_support": sum(int((p > 0).sum()) for p in result.output),
        "source_len": source_len,
    }


def _inflect(predictor: inflection_serving.Inflector, example: inflection.InflectionExample):
    """Beam search for one cell: (best form, beam result, source length)."""
    source = predictor.vocab.encode_source(example.language, example.features, example.lemma)
    max_len = inflection_vocab.max_output_length(example.lemma)
    result = beam_search(predictor.model, source, BEAM, max_len)
    return "".join(predictor.vocab.target[t] for t in result.hypotheses[0].tokens), result, source


def evaluate_inflection_model(name: str, limit: int) -> dict:
    predictor = inflection_serving.Inflector.load(name)
    examples = inflection.load_splits()["test"]
    examples = _limited(examples, limit)
    records = []
    for example in examples:
        text, result, source = _inflect(predictor, example)
        records.append(
            {
                "language": example.language,
                "correct": text in example.forms,
                "ambiguous": len(example.forms) > 1,
                **_decode_record(result, len(source)),
            }
        )
    return {"records": records, "vocab_size": len(predictor.vocab.target)}


def evaluate_reproduction(name: str, limit: int) -> dict:
    """Beam 5 on the full setting's reproduction sets (``inflection.reproduction_sets``): does the
    model give back training-split cells? Each record also says whether the cell was in this
    model's own training set (a high model saw only 10,000 cells per language)."""
    predictor = inflection_serving.Inflector.load(name)
    training, _ = inflection.load_full(predictor.vocab)
    setting = read_manifest(CHECKPOINT_DIR)[name]["data"]["setting"]
    own = training if setting == "full" else inflection.load_splits()[setting]
    return {"records": reproduction_records(predictor, training, own, limit)}


def reproduction_records(
    predictor: inflection_serving.Inflector,
    training: list[inflection.InflectionExample],
    own: list[inflection.InflectionExample],
    limit: int = 0,
) -> list[dict]:
    """One record per cell of the reproduction sets drawn from ``training``: its set, whether
    beam 5's best form is valid, whether the cell is in ``own`` (the model's training set)."""
    taught = {(e.language, e.lemma, e.features) for e in own}
    records = []
    for set_name, examples in inflection.reproduction_sets(training).items():
        for example in _limited(examples, limit):
            text, _, _ = _inflect(predictor, example)
            records.append(
                {
                    "set": set_name,
                    "correct": text in example.forms,
                    "taught": (example.language, example.lemma, example.features) in taught,
                }
            )
    return records


def _corpus_of(name: str) -> str:
    return translation.entry_corpus(read_manifest(CHECKPOINT_DIR)[name])


def _translate_all(predictor: translation_serving.Translator, pairs: list) -> tuple[list, list]:
    """Beam 5 over sentence pairs: (best translations, decode records)."""
    hypotheses, records = [], []
    for pair in pairs:
        source = predictor.source_sp.encode(pair.source)
        result = beam_search(
            predictor.model, source, BEAM, translation_tokenizers.max_output_length(len(source))
        )
        hypotheses.append(predictor.target_sp.decode(result.hypotheses[0].tokens))
        records.append(_decode_record(result, len(source)))
    return hypotheses, records


def evaluate_translation_model(name: str, limit: int) -> dict:
    """BLEU on the test set of the model's own corpus; a model of a later corpus is scored on
    v1's test set too (its sources are test sources in every version: the split is by source
    hash), the yardstick of the v1 models."""
    predictor = translation_serving.Translator.load(name)
    corpus = _corpus_of(name)
    pairs = _limited(translation.build_corpus(corpus=corpus)["test"], limit)
    hypotheses, records = _translate_all(predictor, pairs)
    results = {
        "corpus": corpus,
        "records": records,
        "bleu": sacrebleu.corpus_bleu(hypotheses, [[p.target for p in pairs]]).score,
        "vocab_size": len(predictor.target_vocab),
        "examples": [
            [p.source, h, p.target] for p, h in zip(pairs[:5], hypotheses[:5], strict=True)
        ],
    }
    if corpus != "v1":
        v1_pairs = _limited(translation.build_corpus(corpus="v1")["test"], limit)
        v1_hypotheses, _ = _translate_all(predictor, v1_pairs)
        results["bleu_v1_test"] = sacrebleu.corpus_bleu(
            v1_hypotheses, [[p.target for p in v1_pairs]]
        ).score
    return results


FREQUENT_SOURCES = 500


def evaluate_frequent(name: str, limit: int) -> dict:
    """Beam 5 on the most frequent training sources of the model's corpus: is the corpus
    translation given back exactly (whitespace aside)?"""
    predictor = translation_serving.Translator.load(name)
    pairs = translation.frequent_training_pairs(_corpus_of(name), limit or FREQUENT_SOURCES)
    hypotheses, _ = _translate_all(predictor, pairs)
    exact = [matches_reference(h, [p.target]) for p, h in zip(pairs, hypotheses, strict=True)]
    return {
        "exact": sum(exact) / len(exact),
        "pairs": len(pairs),
        "misses": [
            [p.source, h, p.target]
            for p, h, ok in zip(pairs, hypotheses, exact, strict=True)
            if not ok
        ],
    }


def _limited(items: list, limit: int) -> list:
    """The first `limit` items of each language block stay representative: take every k-th."""
    if not limit or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def model_results(task: str, name: str, limit: int) -> dict | None:
    """Decode the test set with one checkpoint (cached by its sha256); None if not trained.

    task "reproduction" decodes the inflection training cells of ``evaluate_reproduction``,
    "frequent" the most frequent translation training sources (``evaluate_frequent``)."""
    suffix = "" if task in ("inflection", "translation") else f"-{task}"
    if task in ("inflection", "reproduction"):  # a repaired lexicon is another test
        suffix += f"-{_lexicon_digest()[:12]}"
    evaluate = {
        "inflection": evaluate_inflection_model,
        "reproduction": evaluate_reproduction,
        "translation": evaluate_translation_model,
        "frequent": evaluate_frequent,
    }[task]
    return cached_results(
        "seq2seq",
        name,
        f"{limit}{suffix}",
        lambda: evaluate(name, limit),
        f"decoding the {task} set with beam {BEAM}",
    )


@functools.cache
def _lexicon_digest() -> str:
    """sha256 of the inflection cells the evaluation reads: the test split and the full set."""
    inflection.load_splits()  # each builds its file on first use
    inflection.load_full(inflection_vocab.InflectionVocab.load())
    digest = hashlib.sha256()
    for name in ("test.jsonl", f"full-{inflection.FULL_CAP}.jsonl"):
        digest.update((inflection.DATA_DIR / name).read_bytes())
    return digest.hexdigest()


def _accuracy(records: list[dict]) -> float:
    return sum(r["correct"] for r in records) / len(records)


def _macro_accuracy(records: list[dict]) -> float:
    """Accuracy averaged over languages (each language counts once, as in SIGMORPHON)."""
    by_language = defaultdict(list)
    for r in records:
        by_language[r["language"]].append(r)
    return statistics.mean(_accuracy(v) for v in by_language.values())


def reproduction_summary(result: dict) -> dict[str, float]:
    """Share reproduced per reproduction set, and over the cells the model was trained on."""
    by_set = defaultdict(list)
    for r in result["records"]:
        by_set[r["set"]].append(r)
    summary = {name: _accuracy(records) for name, records in by_set.items()}
    taught = [r for r in result["records"] if r["taught"]]
    summary["taught"] = _accuracy(taught) if taught else math.nan
    summary["taught_share"] = len(taught) / len(result["records"])
    return summary


def full_table(test: dict[tuple[str, float], dict], reproduction: dict[tuple[str, float], dict]):
    """The live widget's full models beside the paper-protocol high ones: held-out accuracy,
    training cells given back, and the paper's two sparsity statistics."""
    rows = []
    for setting, alpha in sorted(test, key=lambda k: (FULL_TABLE_SETTINGS.index(k[0]), k[1])):
        result, copied = test[setting, alpha], reproduction.get((setting, alpha))
        summary = reproduction_summary(copied) if copied else {}

        def share(key: str, summary=summary) -> str:
            return _percent(summary[key]) if key in summary else "—"

        rows.append(
            [
                setting,
                f"{alpha:g}",
                _percent(_macro_accuracy(result["records"])),
                share("sample"),
                share("english-irregular-past"),
                share("german-umlaut-plural"),
                share("taught"),
                _percent(statistics.mean(r["single"] for r in result["records"])),
                _percent(statistics.mean(r["exact"] for r in result["records"])),
            ]
        )
    manifest = read_manifest(CHECKPOINT_DIR)
    full = manifest.get(SERVED["inflection"][DEFAULT_ALPHA])
    sizes = ""
    if full is not None:
        cells = full["data"]["full"]["cells"]
        sizes = (
            f"The full models train on {sum(cells.values()):,} cells (every training-split cell "
            f"of English; {full['data']['full']['cap_per_language']:,} per other language, "
            "drawn with weight 2^(wordfreq Zipf frequency of the lemma)), hidden size "
            f"{full['config']['hidden']}; "
        )
    sets = Counter(r["set"] for r in next(iter(reproduction.values()))["records"])
    latest = {}  # the widget's model at each α (models.seq2seq_run.SERVED)
    for alpha in sorted({a for _, a in test}):
        setting = next(s for s in FULL_TABLE_SETTINGS if (s, alpha) in test)
        if setting != "high":
            latest[alpha] = setting
    served = [f"{setting} at α = {alpha:g}" for alpha, setting in latest.items()]
    widget = f"; the widget runs {', '.join(served)}" if served else ""
    return {
        "caption": "The widget's models (the full setting after their replay rounds) beside the "
        f"tables' (high) ones: held-out accuracy, training cells given back, sparsity (beam "
        f"5){widget}",
        "columns": [
            "setting",
            "α",
            "test accuracy (7-language average)",
            f"training sample reproduced ({sets['sample']:,} cells)",
            f"irregular English pasts ({sets['english-irregular-past']:,})",
            f"German umlaut plurals ({sets['german-umlaut-plural']:,})",
            "the same, only cells in the model's own training set",
            "all mass on one sequence",
            "beam 5 exact",
        ],
        "rows": rows,
        "note": f"{sizes}the high models on 10,000 per language. The reproduction sets come "
        "from the full training set: a fixed random sample, every English past or past "
        "participle the -ed rule gets wrong, every German plural that gains an umlaut; a high "
        "model was trained on only some of them, hence the column that counts only those. "
        "Each widget model's rounds (steps, time, the cells each replayed) are on its model "
        "card (/papers/sparse-seq2seq/models)."
        f"{_paired_sentence({a: test[s, a]['records'] for a, s in latest.items()})}",
    }


def mcnemar_p(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar test: the chance of a split of the discordant cells at least
    this uneven if either model were as likely as the other to be the one that is right."""
    n, k = only_first + only_second, min(only_first, only_second)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n) if n else 1.0


def _paired_sentence(records: dict[float, list[dict]]) -> str:
    """Softmax against each sparse α, cell by cell on the same test set ('' without softmax)."""
    if 1.0 not in records:
        return ""
    parts = []
    for alpha, other in records.items():
        if alpha == 1.0:
            continue
        pairs = list(zip(records[1.0], other, strict=True))
        only_softmax = sum(a["correct"] and not b["correct"] for a, b in pairs)
        only_sparse = sum(b["correct"] and not a["correct"] for a, b in pairs)
        p = mcnemar_p(only_softmax, only_sparse)
        parts.append(
            f"against α = {alpha:g}, {only_softmax} right only with softmax and {only_sparse} "
            f"only with α = {alpha:g} (exact McNemar p = {p:.2f})"
        )
    if not parts:
        return ""
    return (
        f" The widget's models cell by cell on the same {len(records[1.0]):,} test cells: "
        + "; ".join(parts)
        + "."
    )


def _full_names(settings: tuple[str, ...] = ("full",)) -> list[str]:
    return [model_name("inflection", a, s) for s in settings for a in ALPHAS]


def inflection_table(results: dict[tuple[str, float], dict | None]) -> dict:
    columns = ["setting", "language"] + [f"α = {a:g}" for a in ALPHAS]
    columns += ["1.5 − 1", "2 − 1", "paper: sparse − softmax"]
    rows = []
    paper = {"high": "≈ +1 (ensembles)", "medium": "up to +2.5 (single models)"}
    for setting in ("high", "medium"):
        trained = {a: results.get((setting, a)) for a in ALPHAS}
        if not any(trained.values()):
            continue
        languages = inflection.LANGUAGES + ("average",)
        for language in languages:
            accuracies = {}
            for alpha, result in trained.items():
                if result is None:
                    continue
                by_language = defaultdict(list)
                for r in result["records"]:
                    by_language[r["language"]].append(r)
                if language == "average":  # macro-average over languages, as SIGMORPHON
                    accuracies[alpha] = statistics.mean(_accuracy(v) for v in by_language.values())
                else:
                    accuracies[alpha] = _accuracy(by_language[language])
            row = [setting, language] + [
                _percent(accuracies[a]) if a in accuracies else "not trained" for a in ALPHAS
            ]
            for alpha in (1.5, 2.0):
                if alpha in accuracies and 1.0 in accuracies:
                    row.append(f"{100 * (accuracies[alpha] - accuracies[1.0]):+.1f}")
                else:
                    row.append("—")
            row.append(paper[setting] if language == "average" else "")
            rows.append(row)
    steps = "; ".join(
        f"{setting}: {_steps_sentence([model_name('inflection', a, setting) for a in ALPHAS])}"
        for setting in ("high", "medium")
    )
    return {
        "caption": "Inflection accuracy on held-out lemmas (beam 5; a prediction counts when it "
        "is one of the cell's valid forms), one multilingual model per α and setting",
        "columns": columns,
        "rows": rows,
        "note": "α is used for both the attention and the output mapping. Test: 500 cells per "
        "language from lemmas never seen in training. The paper (SIGMORPHON 2018, 100+ "
        "languages) reports gains of about one point for sparse over softmax with ensembles, and "
        "up to 2.5 points in the medium setting for single models; its per-language numbers are "
        f"on different data, so only the gains are comparable. Training (batch 128): {steps}.",
    }


def _steps_sentence(names: list[str]) -> str:
    """'every α 8,000 steps', or each α's count when the runs differ."""
    manifest = read_manifest(CHECKPOINT_DIR)
    steps = {name: manifest[name]["steps"] for name in names if name in manifest}
    if len(set(steps.values())) == 1:
        return f"every α {next(iter(steps.values())):,} steps"
    return ", ".join(f"{name.rsplit('-a', 1)[1]}: {n:,} steps" for name, n in steps.items())


def translation_table(results: dict[float, dict | None]) -> dict:
    rows = []
    for alpha in ALPHAS:
        result = results.get(alpha)
        if result is None:
            rows.append([f"{alpha:g}", "not trained", "", ""])
            continue
        steps = result["entry"]["steps"]
        minutes = result["entry"]["wall_time_s"] / 60
        rows.append([f"{alpha:g}", f"{result['bleu']:.1f}", f"{steps:,}", f"{minutes:.0f} min"])
    metric = sacrebleu.BLEU()  # corpus_bleu's defaults, one reference: its signature
    metric.corpus_score(["x"], [["x"]])
    signature = metric.get_signature()
    counts = {name: len(pairs) for name, pairs in translation.read_splits().items()}
    return {
        "caption": "English → German BLEU on the held-out gettext test set (beam 5)",
        "columns": ["α (attention and output)", "BLEU", "training steps", "training time"],
        "rows": rows,
        "note": f"{counts['test']:,} test sentences whose sources never occur in training "
        f"({counts['train']:,} training pairs). sacrebleu {signature}. Training (batch 64): "
        f"{_steps_sentence([model_name('translation', a) for a in ALPHAS])}; the sparse output "
        "mappings cost more time per step while their supports are still wide. The paper's "
        "best BLEU was 1.5-entmax in all six directions (on WMT/IWSLT/KFTT "
        "data, with much larger models); these small CPU models are far from that scale.",
    }


def translation_live_table(limit: int) -> dict | None:
    """The widget's big translation models beside the v1 models of the BLEU table; None (and a
    log line) while no big checkpoint exists."""
    manifest = read_manifest(CHECKPOINT_DIR)
    rows = []
    for setting in ("big + replay", "big", "v1"):
        for alpha in ALPHAS:
            name = model_name("translation", alpha, setting)
            if name not in manifest or (setting == "v1" and not rows):
                continue
            test = model_results("translation", name, limit)
            frequent = model_results("frequent", name, limit)
            bleu_v1 = test.get("bleu_v1_test", test["bleu"])
            bleu_v2 = test["bleu"] if test.get("corpus", "v1") == "v2" else None
            log(f"{name}: {frequent['exact']:.1%} of the frequent sources exact")
            rows.append(
                [
                    setting,
                    f"{alpha:g}",
                    f"{bleu_v1:.1f}",
                    "—" if bleu_v2 is None else f"{bleu_v2:.1f}",
                    _percent(frequent["exact"]),
                    f"{manifest[name]['steps']:,}",
                    f"{manifest[name]['wall_time_s'] / 3600:.1f} h",
                ]
            )
    if not rows:
        log("no seq2seq-translate-big-* checkpoint yet: the translation-live table is skipped")
        return None
    counts = {
        version: {name: len(p) for name, p in translation.build_corpus(corpus=version).items()}
        for version in translation.CORPORA
    }
    return {
        "caption": "The translation widget's models (big, corpus v2) beside the v1 models (beam 5)",
        "columns": [
            "model",
            "α",
            "BLEU, v1 test set",
            "BLEU, v2 test set",
            f"{FREQUENT_SOURCES} most frequent training sources, exact",
            "training steps",
            "training time",
        ],
        "rows": rows,
        "note": f"Corpus v2: {counts['v2']['train']:,} training pairs, one-word labels "
        f"included, and {counts['v2']['test']:,} test sentences (v1: "
        f"{counts['v1']['train']:,} pairs of two words or more, {counts['v1']['test']:,} test "
        "sentences). The v1 test sources are "
        "test sources in v2 too (the split is by a hash of the source), so the v1 column "
        "compares every model on the same unseen sentences. The frequent sources are the "
        f"{FREQUENT_SOURCES} training sources of each model's own corpus that the most "
        "catalogs carry (v2: mostly labels such as Cancel, Delete, Open File; "
        "models.tasks.translation.frequent_training_pairs); exact means the corpus translation "
        "word for word. Big models: 2-layer encoder, hidden 256, batch 64; big + replay: the big "
        "model after a short phase on its training set with the frequent pairs it still got "
        "wrong repeated (models.recipes._translate_big_replay); v1: 1 layer, hidden 128.",
    }


def _sparsity_row(label: str, alpha: float, result: dict) -> list[str]:
    records = result["records"]
    steps = sum(r["steps"] for r in records)
    return [
        label,
        f"{alpha:g}",
        f"{sum(r['attention_support'] for r in records) / steps:.2f} of "
        # per step too, and to the same precision: softmax attends to every source position,
        # and its row must read "13.65 of 13.65", not "13.65 of 13.6"
        f"{sum(r['source_len'] * r['steps'] for r in records) / steps:.2f}",
        f"{sum(r['output_support'] for r in records) / steps:,.2f} of {result['vocab_size']:,}",
        _percent(statistics.mean(r["single"] for r in records)),
        _percent(statistics.mean(r["exact"] for r in records)),
        _ambiguous_single(records),
    ]


def _ambiguous_single(records: list[dict]) -> str:
    """How often a cell with several valid forms still got all mass on one sequence."""
    ambiguous = [r for r in records if r.get("ambiguous")]
    if not ambiguous:
        return "—"
    single = statistics.mean(r["single"] for r in ambiguous)
    return f"{_percent(single)} of {len(ambiguous):,}"


def sparsity_table(inflection_results: dict, translation_results: dict) -> dict:
    rows = []
    for (setting, alpha), result in sorted(inflection_results.items()):
        if result is not None:
            rows.append(_sparsity_row(f"inflection ({setting})", alpha, result))
    for alpha, result in sorted(translation_results.items()):
        if result is not None:
            rows.append(_sparsity_row("translation EN→DE", alpha, result))
    rows += [
        ["paper: inflection (high / medium)", "1.5", "—", "—", "81% / 66%", "87% / 79%", "—"],
        ["paper: translation DE→EN", "1.5", "—", "16.13 of 17,993", "—", "—", "—"],
    ]
    return {
        "caption": "How sparse the trained models are: support sizes per decoding step, and how "
        "often beam search (width 5) finds every sequence the model gives nonzero probability",
        "columns": [
            "model",
            "α",
            "attention support (of source length)",
            "output support (of vocabulary)",
            "all mass on one sequence",
            "beam 5 exact",
            "one sequence, on cells with 2+ forms",
        ],
        "rows": rows,
        "note": "Per step of the best hypothesis, averaged over all test steps. 'All mass on one "
        "sequence': its probability is 1 (within 1e-6). 'Exact': no continuation with nonzero "
        "probability was pruned or cut by the length limit, so the n-best holds every "
        "possible output — never the case under softmax, whose support is the whole vocabulary. "
        "The last column takes only the test cells with several valid forms (dreamed / dreamt): "
        "a model that keeps both in its support does not put all mass on one sequence.",
    }


def data_tables() -> dict:
    splits = inflection.load_splits()
    counts = inflection.split_counts(splits)
    ambiguous = {name: sum(len(e.forms) > 1 for e in examples) for name, examples in splits.items()}
    rows = [
        [name]
        + [f"{counts[name][lang]:,}" for lang in inflection.LANGUAGES]
        + [f"{sum(counts[name].values()):,}", f"{ambiguous[name]:,}"]
        for name in ("high", "medium", "dev", "test")
    ]
    return {
        "inflection-data": {
            "caption": "Inflection data: cells (lemma, features) per language and split",
            "columns": ["split", *inflection.LANGUAGES, "total", "cells with several forms"],
            "rows": rows,
            "note": "Split by lemma (no lemma in two splits). medium ⊂ high. Sources: "
            "lemminflect (en), german-nouns (de nouns), mlconjug3/Verbiste (fr es it pt ro "
            "verbs). A cell with several valid forms trains on each of them.",
        },
        "translation-data": {
            "caption": "Translation data: English → German gettext pairs per corpus version",
            "columns": ["corpus", "packages", "train", "dev", "test", "one-word training sources"],
            "rows": [translation_data_row(version) for version in translation.CORPORA],
            "note": "From the German catalogs of pinned Debian 12 packages "
            "(models/tasks/translation.py); split by a hash of the source, so a source is in "
            "the same split in both versions. Corpus sha256: "
            + "; ".join(f"{v} {_corpus_digest(v)[:16]}…" for v in translation.CORPORA)
            + ".",
        },
    }


def _corpus_digest(version: str) -> str:
    return translation.corpus_sha256(translation.build_corpus(corpus=version))


def translation_data_row(version: str) -> list[str]:
    splits = translation.build_corpus(corpus=version)
    one_word = sum(len(p.source.split()) == 1 for p in splits["train"])
    return [
        version,
        str(len(translation.CORPORA[version].packages)),
        *(f"{len(splits[name]):,}" for name in ("train", "dev", "test")),
        f"{one_word:,}",
    ]


def training_table() -> dict:
    """Steps, wall time and size of every seq2seq checkpoint, from the manifest."""
    manifest = read_manifest(CHECKPOINT_DIR)
    names = [model_name("inflection", a, s) for s in ("high", "medium") for a in ALPHAS]
    full = _full_names(tuple(reversed(FULL_TABLE_SETTINGS[:-1])))
    names += [name for name in full if name in manifest]  # once they are trained
    names += [model_name("translation", a) for a in ALPHAS]
    names += [
        model_name("translation", a, setting)
        for setting in ("big", "big + replay")
        for a in ALPHAS
        if model_name("translation", a, setting) in manifest
    ]
    rows = []
    for name in names:
        entry = manifest.get(name)
        if entry is None:
            rows.append([name, "not trained", "", "", "", ""])
            continue
        metrics = ", ".join(f"{k} {v:g}" for k, v in entry["metrics"].items())
        rows.append(
            [
                name,
                f"{entry['parameters']:,}",
                f"{entry['steps']:,} × {entry['batch_size']}",
                f"{entry['wall_time_s'] / 60:.1f} min",
                f"{entry['size_bytes'] / 1e6:.1f} MB",
                metrics,
            ]
        )
    return {
        "caption": "Training: one CPU thread per model, two models at a time on a 2-core machine",
        "columns": ["checkpoint", "parameters", "steps × batch", "wall time", "size", "dev"],
        "rows": rows,
        "note": "Adam, linear warm-up then cosine decay to 5%, gradient-norm clip 2. Within a "
        "task and setting every α runs the same number of steps, so the comparison between "
        "α values is at equal training. Wall times say more about the machine than the "
        "mapping: they depend on what else ran beside each model, which was not the same for "
        "the two big models. Measured alone, a translation training "
        "step at α = 1.5 costs 1.07× one at α = 1 (bench/seq2seq_train_step.py).",
    }


def evaluate(args: argparse.Namespace) -> dict[str, dict]:
    torch.set_num_threads(args.threads)
    wanted = set(args.tables.split(","))
    tables: dict[str, dict] = {}
    inflection_results: dict[tuple[str, float], dict | None] = {}
    translation_results: dict[float, dict | None] = {}
    if wanted & {"inflection", "sparsity"}:
        for setting in ("high", "medium"):
            for alpha in ALPHAS:
                name = model_name("inflection", alpha, setting)
                inflection_results[(setting, alpha)] = model_results("inflection", name, args.limit)
    if wanted & {"translation", "sparsity"}:
        for alpha in ALPHAS:
            name = model_name("translation", alpha)
            translation_results[alpha] = model_results("translation", name, args.limit)
    if "inflection" in wanted:
        tables["inflection"] = inflection_table(inflection_results)
    if "translation" in wanted:
        tables["translation"] = translation_table(translation_results)
    if "sparsity" in wanted:
        tables["sparsity"] = sparsity_table(inflection_results, translation_results)
    if "data" in wanted:
        tables.update(data_tables())
    if "training" in wanted:
        tables["training"] = training_table()
    if "inflection-full" in wanted:
        full = inflection_full(args.limit)
        if full is not None:
            tables["inflection-full"] = full
    if "translation-live" in wanted:
        live = translation_live_table(args.limit)
        if live is not None:
            tables["translation-live"] = live
    if "copy" in wanted:
        copy = copy_table(args.limit)
        if copy is not None:
            tables["copy"] = copy
        else:
            log("no seq2seq-translate-copy-* checkpoint yet: the copy table is skipped")
    return tables


def inflection_full(limit: int) -> dict | None:
    """The full-vs-high table; None (and a log line) while no full checkpoint exists. The high
    models' reproduction numbers are logged either way."""
    test, reproduction = {}, {}
    for setting in FULL_TABLE_SETTINGS:
        for alpha in ALPHAS:
            name = model_name("inflection", alpha, setting)
            copied = model_results("reproduction", name, limit)
            if copied is None:
                continue
            summary = reproduction_summary(copied)
            log(f"{name} reproduces " + ", ".join(f"{k} {v:.1%}" for k, v in summary.items()))
            reproduction[setting, alpha] = copied
            test[setting, alpha] = model_results("inflection", name, limit)
    if not any(setting != "high" for setting, _ in test):
        log("no seq2seq-inflect-full-* checkpoint yet: the inflection-full table is skipped")
        return None
    return full_table(test, reproduction)
