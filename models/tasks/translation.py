"""English -> German sentence pairs from the gettext catalogs that Debian packages ship.

Reproducible by construction: the packages (name and exact version, Debian 12 "bookworm") are
pinned below, fetched with ``apt-get download`` into data/debs/, unpacked with ``dpkg-deb -x``,
and every German catalog (``.../de/LC_MESSAGES/*.mo``) is read with the standard library's
``gettext.GNUTranslations``. msgid is the English source, msgstr the human German translation.

Cleaning keeps plain sentences: entries with format placeholders (``%s``, ``%(name)s``, ``{0}``,
``$VAR``), markup (``<b>``, ``&amp;``) or several lines are dropped; keyboard accelerators
(``_File``, ``&Open``, ``~Save``) are removed; a trailing colon is removed from both sides;
sources of 2-25 words are kept. Sources are deduplicated (the most frequent translation wins,
ties broken alphabetically) and split by a stable hash of the source, so a source never
appears in two splits. Building needs network access to a Debian mirror; tests use fixtures.
"""

from __future__ import annotations

import gettext
import hashlib
import io
import re
import subprocess
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import sentencepiece as spm

from models.checkpoints import CHECKPOINT_DIR, load_model
from models.recipe import TrainDefaults
from models.seq2seq import (
    BOS,
    EOS,
    PAD,
    UNK,
    Config,
    Seq2Seq,
    Seq2SeqRecipe,
    Trace,
    decode,
    greedy_decode,
)

ROOT = Path(__file__).resolve().parents[2]
DEB_DIR = ROOT / "data" / "debs"
DATA_DIR = ROOT / "data" / "translation"

# Debian 12 (bookworm) packages that carry German catalogs, with the versions used.
PINNED_PACKAGES = (
    ("coreutils", "9.1-1"),
    ("tar", "1.34+dfsg-1.2+deb12u1"),
    ("grep", "3.8-5"),
    ("sed", "4.9-1+deb12u1"),
    ("gawk", "1:5.2.1-2"),
    ("findutils", "4.9.0-4"),
    ("diffutils", "1:3.8-4"),
    ("bash", "5.2.15-2+b13"),
    ("apt", "2.6.2"),
    ("dpkg", "1.21.23"),
    ("util-linux-locales", "2.38.1-5+deb12u3"),
    ("e2fsprogs-l10n", "1.47.0-2"),
    ("gettext", "0.21-12"),
    ("gettext-base", "0.21-12"),
    ("gnupg-l10n", "2.2.40-1.1+deb12u2"),
    ("wget", "1.21.3-1+deb12u1"),
    ("nano", "7.2-1+deb12u1"),
    ("procps", "2:4.0.2-3"),
    ("passwd", "1:4.13+dfsg1-1+deb12u2"),
    ("man-db", "2.11.2-2"),
    ("debconf-i18n", "1.5.82"),
    ("cpio", "2.13+dfsg-7.1"),
    ("parted", "3.5-3+deb12u1"),
    ("sudo", "1.9.13p3-1+deb12u4"),
    ("xz-utils", "5.4.1-1+deb12u2"),
    ("psmisc", "23.6-1"),
    ("dialog", "1.3-20230209-1"),
    ("aptitude-common", "0.8.13-5"),
    ("mc-data", "3:4.8.29-2"),
    ("wdiff", "1.2.2-5"),
    ("texinfo", "6.8-6+b1"),
    ("bison", "2:3.8.2+dfsg-1+b1"),
    ("make", "4.3-4.1"),
    ("libc-l10n", "2.36-9+deb12u14"),
    ("binutils-common", "2.40-2"),
    ("gcc-12-locales", "12.2.0-14+deb12u1"),
    ("gdb", "13.1-3"),
    ("shared-mime-info", "2.2-1"),
    ("nautilus-data", "43.2-1"),
    ("gedit-common", "44.2-1"),
    ("evince-common", "43.1-2+deb12u1"),
    ("libgtk-3-common", "3.24.38-2~deb12u3"),
    ("gimp-data", "2.10.34-1+deb12u10"),
    ("inkscape", "1.2.2-2+deb12u1"),
    ("sharutils", "1:4.15.2-9"),
    ("rsync", "3.5.0+ds1-0+deb12u1"),
    ("cups-common", "2.4.2-3+deb12u9"),
    ("gnome-control-center-data", "1:43.6-2~deb12u1"),
    ("libglib2.0-data", "2.74.6-2+deb12u9"),
    ("gnome-shell-common", "43.9-0+deb12u2"),
    ("vlc-l10n", "3.0.24-0+deb12u1"),
    ("libreoffice-l10n-de", "4:7.4.7-1+deb12u14"),
    ("gnome-terminal-data", "3.46.8-1"),
    ("network-manager", "1.42.4-1+deb12u1"),
    ("gnome-software-common", "43.5-1~deb12u2"),
    ("totem-common", "43.0-2"),
    ("eog", "43.2-1+deb12u1"),
    ("rhythmbox-data", "3.4.6-2"),
)

MIN_WORDS, MAX_WORDS = 2, 25
TEST_PERCENT, DEV_PERCENT = 2, 1

_PLACEHOLDER = re.compile(
    r"%(?![\s.,;)]|$)"  # printf, gcc's %qD / %<, python %(name)s, Qt %1; not "50% "
    r"|\{[^{}]*\}|\$[{(]?\w+|@\w+@"  # {0} / {name}, $VAR / ${VAR} / $(VAR), @VAR@
)
_MARKUP = re.compile(r"<[^<>]*>|&[#\w]+;")
_ACCELERATOR = re.compile(r"(?<![\w_])[_&~](?=\w)|(?<=\w)[_&~](?=\w)")


@dataclass(frozen=True)
class SentencePair:
    source: str  # English
    target: str  # German


def deb_filename_glob(package: str, version: str) -> str:
    version = version.replace(":", "%3a")  # apt-get download escapes the epoch separator
    return f"{package}_{version}_*.deb"


def fetch_debs(deb_dir: Path = DEB_DIR) -> list[Path]:
    """Download the pinned packages that are not cached yet; return all their .deb files."""
    deb_dir.mkdir(parents=True, exist_ok=True)
    missing = [
        f"{package}={version}"
        for package, version in PINNED_PACKAGES
        if not list(deb_dir.glob(deb_filename_glob(package, version)))
    ]
    if missing:
        subprocess.run(["apt-get", "download", *missing], cwd=deb_dir, check=True)
    return [next(deb_dir.glob(deb_filename_glob(p, v))) for p, v in PINNED_PACKAGES]


def extract_german_catalogs(deb: Path, into: Path) -> list[Path]:
    """Unpack one .deb (once) and return its German .mo catalogs, sorted."""
    target = into / deb.stem
    if not target.exists():
        partial = into / f".{deb.stem}.partial"
        subprocess.run(["dpkg-deb", "-x", str(deb), str(partial)], check=True)
        partial.rename(target)
    return sorted(
        p
        for p in target.rglob("*.mo")
        if p.parent.name == "LC_MESSAGES" and p.parent.parent.name == "de"
    )


def read_catalog(path: Path) -> Iterator[tuple[str, str]]:
    """(msgid, msgstr) pairs of one .mo file; plural entries give their singular form."""
    with open(path, "rb") as handle:
        catalog = gettext.GNUTranslations(handle)._catalog
    for key, value in catalog.items():
        if isinstance(key, tuple):  # (msgid, plural index)
            if key[1] != 0:
                continue
            key = key[0]
        if not key:  # the header entry
            continue
        yield key.split("\x04", 1)[-1], value  # drop a msgctxt prefix


def clean_pair(source: str, target: str) -> SentencePair | None:
    """A plain-sentence pair, or None when the entry is not one."""
    if any("\n" in text or "\t" in text for text in (source, target)):
        return None
    if any(_PLACEHOLDER.search(text) or _MARKUP.search(text) for text in (source, target)):
        return None
    if source.count("_") > 1:
        return None  # identifiers such as gtk_widget_show, not a mnemonic
    source, target = (_ACCELERATOR.sub("", text).strip() for text in (source, target))
    source, target = (
        text[:-1].rstrip() if text.endswith(":") else text for text in (source, target)
    )
    if not (MIN_WORDS <= len(source.split()) <= MAX_WORDS) or not target:
        return None
    if len(target.split()) > 2 * MAX_WORDS:
        return None
    if not re.search(r"[A-Za-z]", source):
        return None
    return SentencePair(" ".join(source.split()), " ".join(target.split()))


def dedupe_by_source(pairs: Iterable[SentencePair]) -> list[SentencePair]:
    """One pair per source: its most frequent translation (ties: alphabetical); sorted."""
    translations: dict[str, Counter] = defaultdict(Counter)
    for pair in pairs:
        translations[pair.source][pair.target] += 1
    return [
        SentencePair(source, min(counts, key=lambda t: (-counts[t], t)))
        for source, counts in sorted(translations.items())
    ]


def source_split(source: str) -> str:
    bucket = int(hashlib.sha256(source.encode()).hexdigest(), 16) % 100
    return (
        "test"
        if bucket < TEST_PERCENT
        else "dev"
        if bucket < TEST_PERCENT + DEV_PERCENT
        else "train"
    )


def split_pairs(pairs: list[SentencePair]) -> dict[str, list[SentencePair]]:
    splits: dict[str, list[SentencePair]] = {"train": [], "dev": [], "test": []}
    for pair in pairs:
        splits[source_split(pair.source)].append(pair)
    return splits


def pairs_from_catalogs(catalogs: Iterable[Path]) -> list[SentencePair]:
    cleaned = (clean_pair(s, t) for path in catalogs for s, t in read_catalog(path))
    return dedupe_by_source(pair for pair in cleaned if pair is not None)


def corpus_sha256(splits: dict[str, list[SentencePair]]) -> str:
    digest = hashlib.sha256()
    for name in sorted(splits):
        for pair in splits[name]:
            digest.update(f"{name}\t{pair.source}\t{pair.target}\n".encode())
    return digest.hexdigest()


def write_splits(splits: dict[str, list[SentencePair]], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, pairs in splits.items():
        with (directory / f"{name}.tsv").open("w", encoding="utf-8") as handle:
            handle.writelines(f"{p.source}\t{p.target}\n" for p in pairs)


def read_splits(directory: Path = DATA_DIR) -> dict[str, list[SentencePair]]:
    splits = {}
    for name in ("train", "dev", "test"):
        with (directory / f"{name}.tsv").open(encoding="utf-8") as handle:
            splits[name] = [SentencePair(*line.rstrip("\n").split("\t")) for line in handle]
    return splits


def build_corpus(
    deb_dir: Path = DEB_DIR, out_dir: Path = DATA_DIR
) -> dict[str, list[SentencePair]]:
    """Fetch, extract, clean, dedupe and split; cached as TSV files under data/translation/."""
    if all((out_dir / f"{name}.tsv").exists() for name in ("train", "dev", "test")):
        return read_splits(out_dir)
    extracted = deb_dir / "extracted"
    extracted.mkdir(parents=True, exist_ok=True)
    catalogs = [mo for deb in fetch_debs(deb_dir) for mo in extract_german_catalogs(deb, extracted)]
    splits = split_pairs(pairs_from_catalogs(catalogs))
    write_splits(splits, out_dir)
    return splits


# --- subwords, the training recipe and the inference wrapper ----------------------------------

VOCAB_SIZE = 4000  # per language
MAX_TOKENS = 64  # training pairs longer than this (either side) are skipped
MAX_SOURCE_WORDS, MAX_SOURCE_CHARS = 30, 200


def tokenizer_path(language: str, directory: Path = CHECKPOINT_DIR) -> Path:
    return directory / f"seq2seq-translate-spm-{language}.model"


def train_tokenizer(sentences: list[str], vocab_size: int = VOCAB_SIZE) -> bytes:
    """A unigram SentencePiece model, deterministic: one thread, input in file order.

    Its ids 0-3 are the seq2seq specials (pad, bos, eos, unk)."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        pad_id=PAD,
        bos_id=BOS,
        eos_id=EOS,
        unk_id=UNK,
        num_threads=1,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    return model.getvalue()


def load_tokenizers(
    directory: Path = CHECKPOINT_DIR,
) -> tuple[spm.SentencePieceProcessor, spm.SentencePieceProcessor]:
    """(English, German) tokenizers saved beside the checkpoints."""
    return tuple(
        spm.SentencePieceProcessor(model_file=str(tokenizer_path(language, directory)))
        for language in ("en", "de")
    )


def ensure_tokenizers(train: list[SentencePair], directory: Path = CHECKPOINT_DIR) -> None:
    for language, texts in (("en", [p.source for p in train]), ("de", [p.target for p in train])):
        path = tokenizer_path(language, directory)
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(train_tokenizer(texts))
            tmp.replace(path)


@dataclass
class TranslationRecipe(Seq2SeqRecipe):
    """English -> German subword model per alpha (attention alpha = output alpha)."""

    name: str
    alpha: float
    steps: int = 7_000
    time_budget_min: float | None = None  # equal step counts for every alpha
    emb_dim: int = 64
    hidden: int = 128
    family: str = "seq2seq"
    task: str = "translation"

    def __post_init__(self) -> None:
        self.splits = build_corpus()
        ensure_tokenizers(self.splits["train"])
        self.source_sp, self.target_sp = load_tokenizers()
        self.config = Config(
            src_vocab=self.source_sp.get_piece_size(),
            tgt_vocab=self.target_sp.get_piece_size(),
            emb_dim=self.emb_dim,
            hidden=self.hidden,
            dropout=0.2,
            attn_alpha=self.alpha,
            out_alpha=self.alpha,
        )
        self.defaults = TrainDefaults(
            steps=self.steps,
            batch_size=64,
            lr=2e-3,
            validate_every=1000,
            warmup=200,
            time_budget_min=self.time_budget_min,
        )
        self.optimizer_note = (
            "Adam with warm-up and cosine decay (the paper used OpenNMT-py's Adam)."
        )
        self._pairs = []
        for pair in self.splits["train"]:
            src = self.source_sp.encode(pair.source)
            tgt = self.target_sp.encode(pair.target) + [EOS]
            if len(src) <= MAX_TOKENS and len(tgt) <= MAX_TOKENS:
                self._pairs.append((src, tgt))

    def validate(self, model: Seq2Seq) -> dict[str, float]:
        model.eval()
        pairs = self.splits["dev"]
        hypotheses = greedy_translations(
            model, self.source_sp, self.target_sp, [p.source for p in pairs]
        )
        # sacrebleu is a training/evaluation dependency (the [dev] extra); the web app imports
        # this module for translating and must start without it.
        import sacrebleu

        bleu = sacrebleu.corpus_bleu(hypotheses, [[p.target for p in pairs]])
        return {"dev_bleu_greedy": round(bleu.score, 2)}

    def data_description(self) -> dict:
        return {
            "source": "English msgid -> German msgstr from the de gettext catalogs of pinned "
            "Debian 12 packages (apt-get download, dpkg-deb -x, gettext.GNUTranslations)",
            "packages": [f"{p}={v}" for p, v in PINNED_PACKAGES],
            "filters": f"plain sentences, {MIN_WORDS}-{MAX_WORDS} source words, deduped by source",
            "split": f"by sha256 of the source: {TEST_PERCENT}% test, {DEV_PERCENT}% dev, "
            "the rest train",
            "counts": {name: len(pairs) for name, pairs in self.splits.items()},
            "corpus_sha256": corpus_sha256(self.splits),
            "training_pairs": len(self._pairs),
            "tokenizers": [tokenizer_path(lang).name for lang in ("en", "de")],
            "vocab_size": {"en": self.config.src_vocab, "de": self.config.tgt_vocab},
        }


def max_output_length(source_len: int) -> int:
    return 2 * source_len + 10


def greedy_translations(
    model: Seq2Seq,
    source_sp: spm.SentencePieceProcessor,
    target_sp: spm.SentencePieceProcessor,
    sentences: list[str],
) -> list[str]:
    out = []
    for start in range(0, len(sentences), 128):
        sources = [source_sp.encode(s)[:MAX_TOKENS] for s in sentences[start : start + 128]]
        max_len = max_output_length(max(len(s) for s in sources))
        out += [target_sp.decode(tokens) for tokens in greedy_decode(model, sources, max_len)]
    return out


class InvalidTranslationInput(ValueError):
    """A sentence the model cannot take; the message says what is wrong."""


class Translator:
    """A trained EN->DE model with its tokenizers: sentence -> Trace."""

    def __init__(
        self,
        model: Seq2Seq,
        source_sp: spm.SentencePieceProcessor,
        target_sp: spm.SentencePieceProcessor,
        name: str = "",
    ) -> None:
        self.model, self.source_sp, self.target_sp, self.name = model, source_sp, target_sp, name
        self.target_vocab = [target_sp.id_to_piece(i) for i in range(target_sp.get_piece_size())]

    @classmethod
    def load(cls, name: str, directory: Path = CHECKPOINT_DIR) -> Translator:
        model, _ = load_model(name, directory)
        return cls(model, *load_tokenizers(directory), name)

    def translate(
        self,
        text: str,
        beam_width: int = 5,
        attn_alpha: float | None = None,
        out_alpha: float | None = None,
        check: Callable[[], None] | None = None,
    ) -> Trace:
        """The trace of one sentence; `check` as in models.seq2seq.beam_search."""
        text = " ".join(text.split())
        words = len(text.split())
        if not 1 <= words <= MAX_SOURCE_WORDS or len(text) > MAX_SOURCE_CHARS:
            raise InvalidTranslationInput(
                f"The sentence must have 1-{MAX_SOURCE_WORDS} words and at most "
                f"{MAX_SOURCE_CHARS} characters; it has {words} words, {len(text)} characters."
            )
        pieces = self.source_sp.encode(text, out_type=str)
        ids = [self.source_sp.piece_to_id(p) for p in pieces]
        return decode(
            self.model,
            ids,
            pieces,
            self.target_vocab,
            self.target_sp.decode_pieces,
            width=beam_width,
            max_len=max_output_length(len(ids)),
            attn_alpha=attn_alpha,
            out_alpha=out_alpha,
            check=check,
        )
