"""The copy-capable translation model: its loss, decoding over pieces, and resumable training."""

from __future__ import annotations

import io
from dataclasses import asdict
from pathlib import Path

import pytest
import sentencepiece as spm
import torch

from models.checkpoints import load_model, update_manifest
from models.copy_translation import (
    CopyConfig,
    CopyExampleIds,
    CopySeq2Seq,
    PieceKeys,
    aligned_positions,
    beam_search_pieces,
    collate,
    detokenize,
    fenchel_young_set_loss,
    greedy_decode_pieces,
    init_from_generate_only,
    piece_probabilities,
    read_weights,
    source_pieces,
    target_pieces,
)
from models.copy_translation_train import (
    Plan,
    RunState,
    export_safetensors,
    load_state,
    save_state,
    train_steps,
)
from models.evaluate_copy import decode_sets
from models.seq2seq import BOS, EOS, PAD, UNK, Seq2Seq
from models.tasks.copy_testset import (
    REAL_NAMES,
    TEMPLATES,
    copy_fidelity,
    copy_worthy_tokens,
    english_words,
    template_examples,
    value_split,
)
from models.tasks.translation_serving import CopyTranslator
from models.tasks.translation_tokenizers import load_tokenizers

SENTENCES = [
    "open the file now",
    "close the window",
    "the file is open",
    "save the file",
    "open a new window",
    "delete the old file",
] * 20


@pytest.fixture(scope="module")
def tokenizer() -> spm.SentencePieceProcessor:
    """A tiny word-level tokenizer: pieces like '▁Zorblax' are not in its vocabulary."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES),
        model_writer=model,
        vocab_size=16,
        model_type="word",
        pad_id=PAD,
        bos_id=BOS,
        eos_id=EOS,
        unk_id=UNK,
        minloglevel=2,
    )
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 1.33])
def test_set_loss_gradient_check(alpha: float) -> None:
    torch.manual_seed(0)
    scores = torch.randn(4, 7, dtype=torch.float64, requires_grad=True)
    gold = torch.zeros(4, 7, dtype=torch.bool)
    gold[:, 1] = True
    gold[2, 4] = gold[3, 0] = gold[3, 5] = True
    masked = torch.tensor([False] * 6 + [True])

    def loss(s: torch.Tensor) -> torch.Tensor:
        return fenchel_young_set_loss(s.masked_fill(masked, float("-inf")), gold, alpha, "none")

    assert torch.autograd.gradcheck(loss, (scores,))
    assert bool((loss(scores) >= 0).all())


@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_set_loss_is_zero_beyond_the_margin(alpha: float) -> None:
    k = 3  # the gold piece in the vocabulary and at two source positions
    margin = k ** (1 - alpha) / (alpha - 1)
    gold = torch.tensor([[True, False, True, False, True, False]])
    scores = torch.where(gold, 5.0, 5.0 - margin).double()
    assert float(fenchel_young_set_loss(scores, gold, alpha)) == pytest.approx(0, abs=1e-9)
    closer = torch.where(gold, 5.0, 5.0 - 0.9 * margin).double()
    assert float(fenchel_young_set_loss(closer, gold, alpha)) > 1e-6
    uneven = scores.clone()
    uneven[0, 0] += 0.5  # gold entries must share the mass evenly
    assert float(fenchel_young_set_loss(uneven, gold, alpha)) > 1e-6


def test_target_pieces_copy_source_words(tokenizer) -> None:
    source = ["▁open", "▁Zor", "bl", "ax", "▁now"]
    assert target_pieces(source, "Zorblax now open", tokenizer) == [
        "▁Zor",
        "bl",
        "ax",
        "▁now",
        "▁open",
    ]
    # a word inside a source word gets the word-start piece first
    assert target_pieces(source, "bl", tokenizer)[:2] == ["▁", "bl"]


@pytest.fixture(scope="module")
def corpus_tokenizers() -> tuple[spm.SentencePieceProcessor, spm.SentencePieceProcessor]:
    return load_tokenizers(corpus="v2")


def test_split_numbers_cuts_a_number_from_the_symbol_it_was_learned_with(corpus_tokenizers) -> None:
    english, _ = corpus_tokenizers
    assert source_pieces("20% done", english, False) == ["▁2", "0%", "▁done"]
    assert source_pieces("20% done", english, True) == ["▁2", "0", "%", "▁done"]
    assert source_pieces("Unable to find 300%", english, True)[-4:] == ["▁", "30", "0", "%"]
    # pieces of digits alone, or without digits, stay as the tokenizer wrote them
    for text in ("version 3.2.1", "192.168.0.1", "Saved report-2024.pdf", "mp3 files"):
        assert source_pieces(text, english, True) == source_pieces(text, english, False)


def test_a_piece_is_cut_only_into_pieces_the_tokenizer_knows(tokenizer) -> None:
    # the tiny word-level tokenizer knows neither "2" nor "0%": "▁20%" stays one (unknown) piece
    assert source_pieces("20%", tokenizer, True) == source_pieces("20%", tokenizer, False)


def test_a_split_number_can_be_copied_whole_into_the_target(corpus_tokenizers) -> None:
    english, german = corpus_tokenizers
    target = "300 % konnte nicht gefunden werden"
    whole = target_pieces(source_pieces("Unable to find 300%", english, False), target, german)
    split = target_pieces(source_pieces("Unable to find 300%", english, True), target, german)
    assert split[:3] == ["▁", "30", "0"]  # the source's own pieces: the pointer can emit them
    assert whole[:3] != split[:3]  # unsplit, no run of source pieces spells "300"


def test_the_copy_model_reads_its_source_the_way_it_was_trained(corpus_tokenizers) -> None:
    english, german = corpus_tokenizers
    for split in (False, True):
        torch.manual_seed(0)
        config = CopyConfig(
            english.get_piece_size(), german.get_piece_size(), 8, 16, 0.0, split_numbers=split
        )
        model = CopySeq2Seq.from_config(asdict(config)).eval()
        trace = CopyTranslator(model, english, german).translate("20% done", beam_width=1)
        assert trace.source_tokens == source_pieces("20% done", english, split)


def test_piece_mass_merges_vocabulary_and_positions() -> None:
    probs = torch.tensor([[0.1, 0.2, 0.0, 0.3, 0.4]], dtype=torch.float64)  # V = 3, S = 2
    keys = torch.tensor([1, 3])  # position 0 holds vocabulary piece 1, position 1 an OOV piece
    merged = piece_probabilities(probs, keys, 4)
    assert merged.tolist() == [[0.1, pytest.approx(0.5), 0.0, 0.4]]


def tiny_model(vocab: int, alpha: float = 1.5) -> CopySeq2Seq:
    torch.manual_seed(0)
    return CopySeq2Seq(
        CopyConfig(
            vocab, vocab, emb_dim=8, hidden=16, dropout=0.0, attn_alpha=alpha, out_alpha=alpha
        )
    )


def test_decoding_emits_copied_oov_strings(tokenizer) -> None:
    """With the copy scores made large, the decoder points at the source and emits its piece
    strings, which the target vocabulary lacks."""
    vocab = tokenizer.get_piece_size()
    model = tiny_model(vocab)
    model.eval()
    source = ["▁Zorblax"]
    assert PieceKeys.build(source, tokenizer).source_keys == [vocab]  # out of vocabulary
    with torch.no_grad():
        model.generator.bias.fill_(-50.0)
        model.generator.bias[EOS] = 0.0
        model.copy_bias.fill_(50.0)
    greedy = greedy_decode_pieces(model, [source], tokenizer, tokenizer, max_len=3)
    assert greedy == [["▁Zorblax"] * 3]
    assert detokenize(greedy[0]) == "Zorblax Zorblax Zorblax"
    beam = beam_search_pieces(model, source, tokenizer, tokenizer, width=3, max_len=3)
    assert beam.best == ["▁Zorblax"] * 3
    assert [step.copy_mass for step in beam.hypotheses[0].trail] == [1.0, 1.0, 1.0]
    assert beam.exact is False  # cut by max_len


def test_beam_certificate_sums_to_one_when_exact(tokenizer) -> None:
    """A sparse model with few continuations: exact means the n-best carries all the mass."""
    vocab = tokenizer.get_piece_size()
    model = tiny_model(vocab, alpha=2.0)
    model.eval()
    with torch.no_grad():
        model.generator.bias.fill_(-50.0)
        model.generator.bias[EOS] = 50.0
        model.copy_bias.fill_(50.0)  # EOS and copying tie: two continuations, then EOS
    result = beam_search_pieces(model, ["▁Zorblax"], tokenizer, tokenizer, width=4, max_len=5)
    if result.exact:
        assert result.covered_mass == pytest.approx(1.0)
    assert all(h.finished for h in result.hypotheses)


def test_init_from_generate_only_keeps_shared_weights() -> None:
    config = CopyConfig(20, 20, emb_dim=8, hidden=16)
    base = Seq2Seq(config)
    model = CopySeq2Seq(config)
    fresh = init_from_generate_only(model, base.state_dict())
    assert fresh == sorted(CopySeq2Seq.NEW_PARAMETERS)
    assert torch.equal(model.generator.weight, base.generator.weight)


def examples_for(tokenizer) -> list[CopyExampleIds]:
    pairs = [(s, s) for s in SENTENCES[:6]] + [("open Zorblax now", "Zorblax now open")]
    return [CopyExampleIds.build(s, t, tokenizer, tokenizer) for s, t in pairs] * 4


def test_batch_gold_sets(tokenizer) -> None:
    example = CopyExampleIds.build("open Zorblax now", "Zorblax now open", tokenizer, tokenizer)
    batch = collate([example])
    vocab = tokenizer.get_piece_size()
    first = batch.gold[0, 0]  # "▁Zorblax": not in the vocabulary, at source position 1
    assert first.nonzero().flatten().tolist() == [vocab + 1]
    assert int(batch.copied_from[0, 0]) == 1
    now = batch.gold[0, 1]  # "▁now": its vocabulary entry and source position 2
    assert now.nonzero().flatten().tolist() == [tokenizer.piece_to_id("▁now"), vocab + 2]
    assert int(batch.copied_from[0, 1]) == -1


def test_a_piece_that_continues_a_copied_run_is_aligned_to_the_runs_next_position() -> None:
    source = [11, 12, 13, 11, 14]  # key 11 at positions 0 and 3
    target = [13, 11, 14, 11, EOS]  # a run of positions 2-3-4, then an 11 continuing nothing
    assert aligned_positions(source, target, spans=False) == [[2], [0, 3], [4], [0, 3], []]
    assert aligned_positions(source, target, spans=True) == [[2], [3], [4], [0, 3], []]


def test_span_batches_train_and_read_the_runs_position_only() -> None:
    vocab = 20
    example = CopyExampleIds(
        src=[5, 6, 7, 5, 8],
        target_keys=[13, 11, 14, EOS],
        vocab_size=vocab,
        positions=aligned_positions([11, 12, 13, 11, 14], [13, 11, 14, EOS], spans=True),
    )
    batch = collate([example])
    assert batch.gold[0, 1].nonzero().flatten().tolist() == [11, vocab + 3]  # not vocab + 0
    assert batch.read[0, 1].tolist() == [0, 0, 0, 1, 0]
    plain = collate([CopyExampleIds(**asdict(example) | {"positions": [[2], [0, 3], [4], []]})])
    assert plain.read[0, 1].tolist() == [0.5, 0, 0, 0.5, 0]
    assert plain.read[0, 3].tolist() == [0] * 5  # EOS: nothing to read


def test_the_selective_read_follows_the_copy_mass_of_the_choosing_step() -> None:
    keys = torch.tensor([[1, 2, 3, 1, 4]])
    mask = torch.tensor([[True] * 5])
    chosen = torch.tensor([1])
    mass = torch.tensor([[0.1, 0.3, 0.0, 0.6, 0.0]])
    assert read_weights(chosen, keys, mask, mass).tolist() == [
        [pytest.approx(1 / 7), 0, 0, pytest.approx(6 / 7), 0]
    ]
    generated = torch.tensor([[0.0, 0.3, 0.0, 0.0, 0.0]])  # none on the piece's positions
    assert read_weights(chosen, keys, mask, generated).tolist() == [[0.5, 0, 0, 0.5, 0]]
    assert read_weights(chosen, keys, mask, None).tolist() == [[0.5, 0, 0, 0.5, 0]]
    assert read_weights(torch.tensor([9]), keys, mask, mass).tolist() == [[0.0] * 5]
    padded = torch.tensor([[True, True, True, False, True]])  # position 3 is padding
    assert read_weights(chosen, keys, padded, None).tolist() == [[1.0, 0, 0, 0, 0]]


def test_a_span_model_starts_as_the_copy_model_it_is_initialised_from(tokenizer) -> None:
    vocab = tokenizer.get_piece_size()
    plain = tiny_model(vocab)
    config = CopyConfig(**asdict(plain.config) | {"copy_spans": True})
    spans = CopySeq2Seq(config)
    assert init_from_generate_only(spans, plain.state_dict()) == ["copy_read.weight"]
    plain.eval()
    spans.eval()
    source = tokenizer.encode("open Zorblax now", out_type=str)
    assert beam_search_pieces(spans, source, tokenizer, tokenizer).pieces == (
        beam_search_pieces(plain, source, tokenizer, tokenizer).pieces
    )
    with torch.no_grad():
        spans.copy_read.weight.normal_()  # W_r at work: the read now changes what is decoded
    changed = beam_search_pieces(spans, source, tokenizer, tokenizer)
    plain_result = beam_search_pieces(plain, source, tokenizer, tokenizer)
    assert changed.hypotheses[0].log_prob != plain_result.hypotheses[0].log_prob


def test_training_lowers_the_loss_and_resume_reproduces(tokenizer, tmp_path) -> None:
    vocab = tokenizer.get_piece_size()
    examples = examples_for(tokenizer)
    plan = Plan(steps=12, batch_size=4, lr=1e-2, warmup=2, seed=3)

    def fresh():
        model = tiny_model(vocab)
        model.dropout.p = 0.2  # the dropout RNG must come back on resume too
        return model, torch.optim.Adam(model.parameters(), lr=plan.lr)

    straight, optimizer = fresh()
    batch = collate(examples[:7])
    straight.eval()
    with torch.no_grad():
        before = float(straight(batch))
    state = RunState()
    torch.manual_seed(7)
    train_steps(straight, optimizer, examples, state, plan, 12)
    straight.eval()
    with torch.no_grad():
        assert float(straight(batch)) < before

    resumed, optimizer = fresh()
    state = RunState()
    torch.manual_seed(7)
    train_steps(resumed, optimizer, examples, state, plan, 5)
    path = tmp_path / "state.pt"
    save_state(path, resumed, optimizer, state, {"plan": None})
    torch.manual_seed(99)  # whatever happens in between
    again, optimizer = fresh()
    state, _ = load_state(path, again, optimizer)
    assert state.step == 5
    train_steps(again, optimizer, examples, state, plan, 12)
    for name, value in straight.state_dict().items():
        assert torch.equal(value, again.state_dict()[name]), name
    assert (tmp_path / "curve.json").exists()


def test_template_values_are_disjoint_across_splits() -> None:
    train = template_examples("train", 300, 1)
    test = template_examples("test", 300, 2)
    train_values = {t for e in train for t in e.must_copy}
    test_values = {t for e in test for t in e.must_copy}
    assert not train_values & test_values
    assert all(value_split(v) == "train" for v in train_values)
    held_out = {german for _, german, test_only in TEMPLATES if test_only}
    assert not any(e.kind and e.target in held_out for e in train)


def test_names_made_of_english_words_stay_in_the_training_split() -> None:
    words = set(english_words())
    assert "Transmission" not in words and "Signal" not in words  # real names stay out
    plain = template_examples("train", 300, 1)
    worded = template_examples("train", 300, 1, word_names=1.0)
    names = [e.source for e in worded if e.kind.startswith("template:name")]
    assert names and plain != worded
    for example in worded:
        kinds = example.kind.removeprefix("template:").split(",")
        if kinds[0] == "name":
            name = example.must_copy[0]
            assert value_split(name) == "train" and name not in REAL_NAMES
            made_of_words = name in words or any(
                name.startswith(w) and name[len(w) :] in words for w in words
            )
            assert made_of_words, name
    test = template_examples("test", 300, 2)
    assert not {t for e in worded for t in e.must_copy} & {t for e in test for t in e.must_copy}


def test_copy_fidelity_counts_verbatim_tokens() -> None:
    examples = template_examples("dev", 2, 5)
    perfect = copy_fidelity(examples, [e.target for e in examples])
    assert perfect["copy_fidelity"] == 100.0
    assert copy_fidelity(examples, ["" for _ in examples])["copy_fidelity"] == 0.0
    assert copy_worthy_tokens("Quit GParted now", "GParted beenden") == ("GParted",)
    assert copy_worthy_tokens("Connect to 192.168.0.1", "Mit 192.168.0.10 verbinden") == ()


def test_export_ships_weights_that_load_by_family(tmp_path) -> None:
    """A run's state becomes safetensors whose manifest entry builds the same copy model and
    names its parent by checkpoint and sha256 only."""
    model = tiny_model(30)
    optimizer = torch.optim.Adam(model.parameters())
    plan = Plan(steps=10, batch_size=4, lr=1e-3, warmup=2, seed=3)
    meta = {
        "config": asdict(model.config),
        "plan": asdict(plan),
        "init_from": {"checkpoint": "parent", "sha256": "ab" * 32, "steps": 7, "metrics": {}},
        "data": {"corpus": "v2"},
        "command": "python -m models.copy_translation_train train --alpha 1.5 --run t",
        "threads": 1,
    }
    state = RunState(step=4, elapsed_s=12.5, curve=[{"step": 4, "dev_copy_fidelity": 80.0}])
    save_state(tmp_path / "state.pt", model, optimizer, state, meta)
    entry = export_safetensors(tmp_path / "state.pt", tmp_path / "copy.safetensors")
    assert entry["init_from"] == {"checkpoint": "parent", "sha256": "ab" * 32}
    assert entry["steps"] == 4 and entry["metrics"] == {"dev_copy_fidelity": 80.0}
    update_manifest(tmp_path, "copy", entry)
    loaded, _ = load_model("copy", tmp_path)
    assert isinstance(loaded, CopySeq2Seq)
    for name, value in model.state_dict().items():
        assert torch.equal(value, loaded.state_dict()[name]), name


def test_copy_evaluation_counts_what_passes_through() -> None:
    """An identity 'translation' keeps every must-copy token; an empty one keeps none."""
    echo = decode_sets(lambda sentence: sentence, limit=6)
    assert echo["copy"]["copy_fidelity"] == 100.0
    assert echo["copy_testset"]["sentences"] == 6
    silent = decode_sets(lambda sentence: "", limit=6)
    assert silent["copy"]["copy_fidelity"] == 0.0
    assert silent["bleu_v2_test"] == 0.0 and silent["frequent_exact"] == 0.0


def test_copy_table_rows_pair_each_copy_model_with_its_parent(monkeypatch, tmp_path) -> None:
    from models import evaluate_copy

    def results(fidelity: float) -> dict:
        copy = {"copy_fidelity": fidelity, "copy_fidelity_corpus": fidelity + 1}
        return {
            "copy": {**copy, "copy_fidelity_template": fidelity - 1},
            "copy_testset": {"version": 1, "sentences": 982, "must_copy_tokens": 1218},
            "bleu_v2_test": 27.44,
            "frequent_exact": 0.908,
        }

    generate = {"family": "seq2seq", "steps": 48_000, "sha256": "a" * 64}
    copy = {
        "family": "seq2seq-copy",
        "steps": 6_000,
        "sha256": "b" * 64,
        "init_from": {"checkpoint": "seq2seq-translate-big-a1.5-replay", "sha256": "a" * 64},
    }
    for name, entry in (
        ("seq2seq-translate-big-a1.5-replay", generate),
        ("seq2seq-translate-copy-a1.5", copy),
        ("seq2seq-translate-big-a2-replay", {"steps": 48_000, "sha256": "d" * 64}),  # no copy
    ):
        update_manifest(tmp_path, name, entry)
    fidelity = {"seq2seq-translate-big-a1.5-replay": 66.0, "seq2seq-translate-copy-a1.5": 98.5}
    monkeypatch.setattr(evaluate_copy, "CHECKPOINT_DIR", tmp_path)
    monkeypatch.setattr(evaluate_copy, "model_results", lambda name, limit: results(fidelity[name]))
    table = evaluate_copy.copy_table()
    assert table["rows"] == [
        ["generate only", "1.5", "66.0%", "67.0%", "65.0%", "27.4", "90.8%", "48,000"],
        ["copy", "1.5", "98.5%", "99.5%", "97.5%", "27.4", "90.8%", "+6,000"],
    ]
    assert "982 sentences, 1,218 tokens" in table["note"]
    # the copy model continued from itself and shipped under its name: its generate-only
    # parent is found through the lineage, and both copy runs' steps are counted
    again = {**copy, "sha256": "c" * 64, "init_from": {"checkpoint": "x", "sha256": "b" * 64}}
    update_manifest(tmp_path, "seq2seq-translate-copy-a1.5", again)
    fidelity["seq2seq-translate-copy-a1.5"] = 99.0
    rows = evaluate_copy.copy_table()["rows"]
    assert [row[0] for row in rows] == ["generate only", "copy"]
    assert rows[0][-1] == "48,000" and rows[1][-1] == "+12,000" and rows[1][2] == "99.0%"
    (tmp_path / "manifest.json").write_text("{}")
    assert evaluate_copy.copy_table() is None


def test_served_trace_shows_the_pointer(tokenizer) -> None:
    """The copy model's Trace: each step's pointer over the source beside its attention, its
    piece distribution naming the copied string, and the best hypothesis as text."""
    vocab = tokenizer.get_piece_size()
    model = tiny_model(vocab)
    model.eval()
    with torch.no_grad():
        model.generator.bias.fill_(-50.0)
        model.generator.bias[EOS] = 0.0
        model.copy_bias.fill_(50.0)
    trace = CopyTranslator(model, tokenizer, tokenizer).translate("Zorblax", beam_width=2)
    assert trace.source_tokens == ["▁Zorblax"]
    assert trace.hypotheses[0].text.startswith("Zorblax")
    for step in trace.steps:
        assert len(step.copy_weights) == len(step.attention) == len(trace.source_tokens)
        assert step.copy_mass == pytest.approx(sum(step.copy_weights), abs=1e-5)
        assert sum(entry.probability for entry in step.output) <= 1 + 1e-5
    first = trace.steps[0]
    assert first.copy_mass == pytest.approx(1.0)
    assert first.output[0].token == "▁Zorblax" and first.support_size == 1
    assert "copy_weights" in first.model_dump()
    generated = trace.model_copy(
        update={"steps": [first.model_copy(update={"copy_weights": None, "copy_mass": None})]}
    )
    assert "copy_weights" not in generated.model_dump()["steps"][0]  # absent, not null


def test_beam_search_over_pieces_stops_when_checked(tokenizer) -> None:
    model = tiny_model(tokenizer.get_piece_size())
    model.eval()
    calls = []

    def check() -> None:
        calls.append(1)
        if len(calls) > 2:
            raise TimeoutError("deadline")

    with pytest.raises(TimeoutError):
        beam_search_pieces(model, ["▁open"], tokenizer, tokenizer, width=2, max_len=9, check=check)
    assert len(calls) == 3


def test_shipping_a_continued_run_under_its_name_keeps_the_old_weights_in_the_lineage(
    tmp_path: Path,
) -> None:
    """A copy model continued from itself and exported under the same name: the old entry goes
    to lineage.json, so ancestry still walks copy → copy → generate-only."""
    from models.checkpoints import ancestry, read_lineage, read_manifest

    base = {"family": "seq2seq", "sha256": "a" * 64, "steps": 48_000}
    first = {
        "family": "seq2seq-copy",
        "sha256": "b" * 64,
        "steps": 6_000,
        "init_from": {"checkpoint": "gen", "sha256": "a" * 64},
    }
    update_manifest(tmp_path, "gen", base)
    update_manifest(tmp_path, "copy", first)
    update_manifest(tmp_path, "copy", first)  # the same weights again: nothing to keep
    assert read_lineage(tmp_path) == {}
    second = {**first, "sha256": "c" * 64, "init_from": {"checkpoint": "copy", "sha256": "b" * 64}}
    update_manifest(tmp_path, "copy", second)
    kept = read_lineage(tmp_path)["b" * 64]
    assert kept["checkpoint"] == "copy" and kept["family"] == "seq2seq-copy"
    assert kept["steps"] == 6_000 and kept["init_from"]["checkpoint"] == "gen"
    assert "data" not in kept  # no replay, nothing of its data
    chain = ancestry(read_manifest(tmp_path)["copy"], tmp_path)
    assert [(e["checkpoint"], e["sha256"][0]) for e in chain] == [("copy", "b"), ("gen", "a")]
    # a replaced run that replayed frequent sources keeps that (the card's "repeated" column)
    replay = {"frequent_sources": 2000, "copies": 8, "how": "…"}
    third = {**second, "sha256": "d" * 64, "init_from": {"checkpoint": "copy", "sha256": "c" * 64}}
    update_manifest(tmp_path, "copy", {**third, "data": {"corpus": "v2", "replay": replay}})
    update_manifest(tmp_path, "copy", {**third, "sha256": "e" * 64, "data": {"corpus": "v2"}})
    assert read_lineage(tmp_path)["d" * 64]["data"] == {"replay": replay}
    assert "data" not in read_lineage(tmp_path)["c" * 64]
