"""The bigger translation models: a stacked encoder in models.seq2seq, the
seq2seq-translate-big-* recipes on corpus v2, and loading a checkpoint with its corpus's
tokenizers. The corpus and tokenizers are small fixtures, so nothing here needs a mirror."""

from pathlib import Path

import pytest
import sentencepiece as spm
import torch

from models.checkpoints import save_checkpoint
from models.recipe import TrainDefaults
from models.recipes import RECIPES, get_recipe
from models.seq2seq import Config, Seq2Seq, pad_batch
from models.tasks import translation, translation_recipe, translation_tokenizers
from models.tasks.translation import SentencePair
from models.tasks.translation_serving import Translator
from models.tasks.translation_tokenizers import train_tokenizer

WORDS = "open close save the file window document new old read write copy".split()


def _sentences() -> list[str]:
    return [" ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 6)) for i in range(300)]


def _batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    src, lengths = pad_batch([[5, 6, 7, 8], [9, 10], [11, 12, 13]])
    tgt, _ = pad_batch([[5, 6, 2], [7, 2], [8, 9, 10, 2]])
    return src, lengths, tgt


def test_a_two_layer_encoder_starts_the_decoder_from_its_top_layer() -> None:
    torch.manual_seed(0)
    model = Seq2Seq(Config(20, 20, emb_dim=8, hidden=16, encoder_layers=2)).eval()
    assert model.encoder.num_layers == 2
    assert model.encoder.dropout == pytest.approx(0.2)  # between the layers
    src, lengths, _ = _batch()
    _, state = model.encode(src, lengths)
    packed = torch.nn.utils.rnn.pack_padded_sequence(
        model.src_embed(src), lengths, batch_first=True, enforce_sorted=False
    )
    _, (h, c) = model.encoder(packed)  # (layers * directions, batch, hidden // 2)
    assert torch.equal(state.h, torch.cat([h[2], h[3]], dim=-1))
    assert torch.equal(state.c, torch.cat([c[2], c[3]], dim=-1))
    assert not torch.equal(state.h, torch.cat([h[0], h[1]], dim=-1))


def test_one_layer_models_keep_their_weights_and_configs() -> None:
    """Checkpoints saved before encoder_layers existed have no such key and one layer."""
    config = {"src_vocab": 20, "tgt_vocab": 20, "emb_dim": 8, "hidden": 16}
    model = Seq2Seq.from_config(config)
    assert model.encoder.num_layers == 1 and model.encoder.dropout == 0
    keys = {k for k in model.state_dict() if k.startswith("encoder.")}
    assert keys == {
        f"encoder.{kind}_l0{suffix}"
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        for suffix in ("", "_reverse")
    }
    two = Seq2Seq(Config(20, 20, emb_dim=8, hidden=16, encoder_layers=2))
    assert set(two.state_dict()) - set(model.state_dict()) == {
        k.replace("_l0", "_l1") for k in keys
    }


def test_a_two_layer_model_learns_a_batch() -> None:
    torch.manual_seed(0)
    model = Seq2Seq(Config(20, 20, emb_dim=8, hidden=16, encoder_layers=2, dropout=0.0))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
    batch = _batch()
    first = model(*batch).item()
    for _ in range(25):
        optimizer.zero_grad()
        model(*batch).backward()
        optimizer.step()
    assert model(*batch).item() < 0.5 * first


@pytest.fixture
def v2_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A tiny corpus and tokenizers standing in for v2's, in a temporary checkpoint folder."""
    for corpus in ("v2",):
        for language in ("en", "de"):
            translation_tokenizers.tokenizer_path(language, tmp_path, corpus).write_bytes(
                train_tokenizer(_sentences(), 30)
            )
    pairs = [SentencePair(s, s.upper()) for s in _sentences()]
    splits = {"train": pairs[:250], "dev": pairs[250:270], "test": pairs[270:]}
    calls = []

    def fake_build_corpus(corpus: str = "v1", **_: object) -> dict:
        calls.append(corpus)
        return splits

    # the recipe module's own names for what it calls
    monkeypatch.setattr(translation_recipe, "build_corpus", fake_build_corpus)
    monkeypatch.setattr(
        translation_recipe,
        "load_tokenizers",
        lambda directory=tmp_path, corpus="v1": tuple(
            spm.SentencePieceProcessor(
                model_file=str(translation_tokenizers.tokenizer_path(lang, tmp_path, corpus))
            )
            for lang in ("en", "de")
        ),
    )
    monkeypatch.setattr(translation_recipe, "ensure_tokenizers", lambda *a, **k: None)
    return {"dir": tmp_path, "calls": calls}


@pytest.mark.parametrize("alpha", ["1", "1.33", "1.5", "2"])
def test_big_recipes_train_a_two_layer_model_on_corpus_v2(v2_fixture: dict, alpha: str) -> None:
    name = f"seq2seq-translate-big-a{alpha}"
    assert name in RECIPES
    recipe = get_recipe(name)
    assert v2_fixture["calls"] == ["v2"]
    assert recipe.name == name and recipe.config.attn_alpha == pytest.approx(float(alpha), 0.01)
    assert (recipe.config.encoder_layers, recipe.config.hidden) == (2, 256)
    data = recipe.data_description()
    assert data["corpus"] == "v2"
    assert data["tokenizers"] == [
        "seq2seq-translate-v2-spm-en.model",
        "seq2seq-translate-v2-spm-de.model",
    ]
    assert len(data["packages"]) == len(translation.CORPORA["v2"].packages)
    assert "one-word source must be a label" in data["filters"]
    model = recipe.build_model()
    batch = next(recipe.batches(8, 0, 0, 0))
    assert torch.isfinite(recipe.loss(model, batch))


def test_the_shipped_recipes_stay_on_corpus_v1(v2_fixture: dict) -> None:
    for language in ("en", "de"):  # v1's tokenizers under their first names
        translation_tokenizers.tokenizer_path(language, v2_fixture["dir"]).write_bytes(
            train_tokenizer(_sentences(), 30)
        )
    recipe = get_recipe("seq2seq-translate-a1.5")
    assert v2_fixture["calls"] == ["v1"]
    assert (recipe.config.encoder_layers, recipe.config.hidden, recipe.config.emb_dim) == (
        1,
        128,
        64,
    )
    assert recipe.defaults.batch_size == 64 and recipe.defaults.steps == 7000
    assert recipe.data_description()["tokenizers"] == [
        "seq2seq-translate-spm-en.model",
        "seq2seq-translate-spm-de.model",
    ]


def test_a_checkpoint_loads_with_its_corpus_tokenizers(tmp_path: Path) -> None:
    for language in ("en", "de"):  # only v2's tokenizers exist in this folder
        translation_tokenizers.tokenizer_path(language, tmp_path, "v2").write_bytes(
            train_tokenizer(_sentences(), 30)
        )
    torch.manual_seed(0)
    config = Config(30, 30, emb_dim=8, hidden=16, encoder_layers=2)
    entry = {"family": "seq2seq", "task": "translation", "config": config.__dict__}
    save_checkpoint(Seq2Seq(config), "demo-v2", {**entry, "data": {"corpus": "v2"}}, tmp_path)
    translator = Translator.load("demo-v2", tmp_path)
    assert translator.model.encoder.num_layers == 2
    assert translator.translate("open the file", beam_width=2).hypotheses
    save_checkpoint(Seq2Seq(config), "demo-v1", {**entry, "data": {}}, tmp_path)
    # an entry without a corpus is v1's, whose tokenizers this folder lacks
    with pytest.raises(RuntimeError, match="seq2seq-translate-spm-en.model"):
        Translator.load("demo-v1", tmp_path)


def test_the_replay_phase_repeats_the_frequent_pairs_its_source_model_gets_wrong(
    v2_fixture: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    frequent = [SentencePair(s, s.upper()) for s in _sentences()[:10]]
    asked: list = []
    monkeypatch.setattr(
        translation_recipe,
        "frequent_training_pairs",
        lambda corpus, k: asked.append((corpus, k)) or frequent[:k],
    )
    monkeypatch.setattr(translation_recipe, "load_model", lambda name: (torch.nn.Linear(1, 1), {}))
    monkeypatch.setattr(translation_recipe, "read_manifest", lambda: {name: {"sha256": "ab12"}})
    # the source model gives back every other pair word for word (a stray space is no miss)
    monkeypatch.setattr(
        translation_recipe,
        "greedy_translations",
        lambda model, src_sp, tgt_sp, sources: [
            f" {s.upper()}" if i % 2 == 0 else s for i, s in enumerate(sources)
        ],
    )
    name = "seq2seq-translate-big-a1.5"
    recipe = get_recipe(f"{name}-replay")
    assert asked == [("v2", 2000)]
    assert (recipe.defaults.steps, recipe.defaults.lr) == (4000, pytest.approx(5e-4))
    assert (recipe.config.encoder_layers, recipe.config.hidden) == (2, 256)  # the big model's
    replay = recipe.data_description()["replay"]
    assert replay == {
        "from": name,
        "sha256": "ab12",
        "frequent_pairs_checked": 2000,
        "pairs_wrong_before": 5,
        "copies": 8,
    }
    wrong = recipe._encoded(frequent[1::2])
    assert recipe._pairs[: -len(wrong) * 8] == recipe._encoded(recipe.splits["train"])
    assert recipe._pairs[-len(wrong) * 8 :] == wrong * 8


@pytest.mark.parametrize("alpha", ["1", "2"])
def test_a_big_recipe_is_exactly_its_configuration(v2_fixture: dict, alpha: str) -> None:
    """Every field of the model and the schedule, so none falls back to a default unnoticed
    (α = 1 and 2: the defaults of Config are α 1.5, dropout 0.2, embeddings 64)."""
    recipe = get_recipe(f"seq2seq-translate-big-a{alpha}")
    vocab = (recipe.config.src_vocab, recipe.config.tgt_vocab)
    assert recipe.config == Config(
        *vocab,
        emb_dim=128,
        hidden=256,
        dropout=0.2,
        attn_alpha=float(alpha),
        out_alpha=float(alpha),
        encoder_layers=2,
    )
    assert recipe.defaults == TrainDefaults(
        steps=44_000, batch_size=64, lr=2e-3, validate_every=2000, warmup=200
    )
