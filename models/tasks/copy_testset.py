"""Copy-worthy English -> German material: template sentences whose placeholders (names,
numbers, percentages, versions, paths, file names, URLs, e-mail and IP addresses) must pass
through unchanged, the held-out corpus pairs whose reference keeps a source token verbatim, and
the metric "copy fidelity": the share of must-copy tokens that appear verbatim in the output.

Disjoint by construction: every generated value is put in one split by the sha256 of its text
(``value_split``: 20% test, 10% dev, 70% train), so the values a model trains on never appear in
the dev slice or the test set; a few templates are held out for the test set too
(``TEMPLATES`` marked ``test_only``). The test set is versioned (``COPY_TESTSET_VERSION``) and
rebuilt from a fixed seed, so its sha256 names it.

    python -m models.tasks.copy_testset      # prints the test set's size and sha256
"""

from __future__ import annotations

import hashlib
import json
import lzma
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from models.checkpoints import CHECKPOINT_DIR
from models.references import reference_name
from models.tasks.translation import CORPORA, SentencePair, build_corpus, corpus_sha256

COPY_TESTSET_VERSION = 1
TEST_SEED, DEV_SEED = 40_001, 40_002
TEST_VALUE_PERCENT, DEV_VALUE_PERCENT = 20, 10


@dataclass(frozen=True)
class CopyExample:
    source: str
    target: str  # the reference
    must_copy: tuple[str, ...]  # tokens that must appear verbatim in a translation
    kind: str  # "template:<placeholder kinds>" or "corpus"


def corpus_splits(corpus: str = "v2") -> dict[str, list[SentencePair]]:
    """The corpus splits: the cached TSV files when present, else the pairs stored in the
    reference file beside the checkpoints (no Debian mirror needed), checked by sha256."""
    version = CORPORA[corpus]
    if all((version.directory / f"{n}.tsv").exists() for n in ("train", "dev", "test")):
        return build_corpus(corpus=corpus)
    name = reference_name("translation", corpus)
    with lzma.open(CHECKPOINT_DIR / f"{name}.json.xz") as handle:
        document = json.loads(handle.read())
    splits = {k: [SentencePair(*p) for p in v] for k, v in document["pairs"].items()}
    if corpus_sha256(splits) != document["corpus_sha256"]:
        raise ValueError(f"The pairs in {name} do not match their corpus sha256.")
    return splits


def value_split(value: str) -> str:
    bucket = int(hashlib.sha256(value.encode()).hexdigest(), 16) % 100
    if bucket < TEST_VALUE_PERCENT:
        return "test"
    return "dev" if bucket < TEST_VALUE_PERCENT + DEV_VALUE_PERCENT else "train"


# --- values -----------------------------------------------------------------------------------

_ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr kl pl pr st tr sk sp".split()
_VOWELS = "a e i o u ai ea ou y".split()
_CODAS = ["", "", "n", "r", "x", "s", "l", "m", "k", "nd", "st", "rt"]
_TLDS = ("org", "com", "net", "io", "de", "eu", "dev", "info")
_EXTENSIONS = ("pdf", "txt", "png", "odt", "csv", "tar.gz", "zip", "jpg", "conf", "log", "py")
# Real program names for the test set only; the generated names for training are pseudo-words.
REAL_NAMES = (
    "LibreOffice",
    "GParted",
    "Thunderbird",
    "Inkscape",
    "Audacity",
    "Blender",
    "Krita",
    "VirtualBox",
    "Wireshark",
    "Nextcloud",
    "OpenShot",
    "Kdenlive",
    "Shotcut",
    "Darktable",
    "FileZilla",
    "KeePassXC",
    "Syncthing",
    "Transmission",
    "qBittorrent",
    "Calibre",
    "Scribus",
    "Gnumeric",
    "Pidgin",
    "HexChat",
    "Evolution",
    "Rhythmbox",
    "Clementine",
    "Lutris",
    "Steam",
    "OBS Studio",
    "MuseScore",
    "FreeCAD",
    "KiCad",
    "QGIS",
    "Zotero",
    "Anki",
    "Signal",
    "Jitsi",
)


def _syllable(rng: random.Random) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def _word(rng: random.Random, syllables: int | None = None) -> str:
    return "".join(_syllable(rng) for _ in range(syllables or rng.randint(1, 3)))


def _name(rng: random.Random) -> str:
    parts = [_word(rng, rng.randint(1, 2)).capitalize() for _ in range(rng.choice((1, 1, 2)))]
    name = "".join(parts)
    return name.upper() if rng.random() < 0.1 and len(name) <= 5 else name


def _number(rng: random.Random) -> str:
    return str(rng.randint(0, 10 ** rng.randint(1, 6)))


def _version(rng: random.Random) -> str:
    parts = [str(rng.randint(0, 30)) for _ in range(rng.choice((2, 3, 3)))]
    return ".".join(parts)


def _file(rng: random.Random) -> str:
    stem = "-".join(_word(rng, rng.randint(1, 2)) for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.3:
        stem += f"-{rng.randint(1990, 2030)}"
    return f"{stem}.{rng.choice(_EXTENSIONS)}"


def _path(rng: random.Random) -> str:
    folders = [_word(rng, rng.randint(1, 2)) for _ in range(rng.randint(1, 3))]
    root = rng.choice(("/home/" + _word(rng, 2), "~", "/var", "/etc", "/tmp", "/usr/share"))
    return "/".join([root, *folders, _file(rng)])


def _url(rng: random.Random) -> str:
    host = f"{rng.choice(('', 'www.', 'docs.', 'git.'))}{_word(rng, 2)}.{rng.choice(_TLDS)}"
    tail = "/".join(_word(rng, rng.randint(1, 2)) for _ in range(rng.randint(0, 2)))
    return f"{rng.choice(('https', 'https', 'http'))}://{host}/{tail}"


def _email(rng: random.Random) -> str:
    user = _word(rng, rng.randint(1, 2)) + rng.choice(("", ".", "_")) * rng.randint(0, 1)
    user = user + _word(rng, 1) if user.endswith((".", "_")) else user
    return f"{user}@{_word(rng, 2)}.{rng.choice(_TLDS)}"


def _ip(rng: random.Random) -> str:
    return ".".join(str(rng.randint(0, 255)) for _ in range(4))


VALUE_KINDS: dict[str, Callable[[random.Random], str]] = {
    "name": _name,
    "number": _number,
    "percent": _number,
    "version": _version,
    "file": _file,
    "path": _path,
    "url": _url,
    "email": _email,
    "ip": _ip,
}


WORD_NAME_POOL = (300, 5_000)  # ranks of the English words names are made of (past "the")


def english_words() -> list[str]:
    """Common English words, capitalised, that no real program name contains: what a
    training name made of words is built from (wordfreq, a PyPI package's own data)."""
    from wordfreq import top_n_list  # a data dependency (the [dev] extra)

    taken = " ".join(REAL_NAMES).lower()
    first, last = WORD_NAME_POOL
    words = (w for w in top_n_list("en", last)[first:] if w.isascii() and w.isalpha())
    return [w.capitalize() for w in words if len(w) >= 3 and w not in taken]


def _word_name(rng: random.Random, words: Sequence[str]) -> str:
    """A program name made of one or two English words ("Harbor", "QuickNote"): the kind of
    name a decoder would rather translate than copy."""
    return "".join(rng.choice(words) for _ in range(rng.choice((1, 1, 2))))


def draw_value(
    kind: str, split: str, rng: random.Random, word_names: float = 0.0, words: Sequence[str] = ()
) -> str:
    """A value of `kind` whose text belongs to `split` (rejection by ``value_split``); test
    names are also drawn from the real program names, and training names, with probability
    `word_names`, from English `words`."""
    if kind == "name" and split == "test" and rng.random() < 0.5:
        return rng.choice(REAL_NAMES)
    use_words = kind == "name" and split == "train" and word_names and rng.random() < word_names
    while True:
        value = _word_name(rng, words) if use_words else VALUE_KINDS[kind](rng)
        if value_split(value) == split and value not in REAL_NAMES:
            return value


# --- templates --------------------------------------------------------------------------------
# (English, German, test_only). {percent} is written "N%" in English and "N %" in German, as the
# catalogs do; its must-copy token is the number.

TEMPLATES: tuple[tuple[str, str, bool], ...] = (
    ("Copy {name} to the clipboard", "{name} in die Zwischenablage kopieren", False),
    ("Quit {name}?", "{name} beenden?", False),
    ("Welcome to {name}", "Willkommen bei {name}", False),
    ("{name} is not responding", "{name} reagiert nicht", False),
    ("About {name}", "Über {name}", False),
    ("Start {name}", "{name} starten", False),
    ("{name} version {version}", "{name} Version {version}", False),
    ("Install {name} {version}", "{name} {version} installieren", False),
    ("Update to version {version}", "Auf Version {version} aktualisieren", False),
    ("Unable to find {percent}", "{percent} konnte nicht gefunden werden", False),
    ("{percent} complete", "{percent} abgeschlossen", False),
    ("Zoom to {percent}", "Auf {percent} vergrößern", False),
    ("{number} files selected", "{number} Dateien ausgewählt", False),
    ("Page {number}", "Seite {number}", False),
    ("Could not open {path}", "{path} konnte nicht geöffnet werden", False),
    ("Delete {path}?", "{path} löschen?", False),
    ("Saved {file}", "{file} gespeichert", False),
    ("Open {file}", "{file} öffnen", False),
    ("The file {file} already exists", "Die Datei {file} existiert bereits", False),
    ("Visit {url}", "{url} besuchen", False),
    ("Could not load {url}", "{url} konnte nicht geladen werden", False),
    ("Send an e-mail to {email}", "Eine E-Mail an {email} senden", False),
    ("Invalid e-mail address {email}", "Ungültige E-Mail-Adresse {email}", False),
    ("Connection refused by server {ip}", "Verbindung durch Server {ip} abgelehnt", False),
    ("Connecting to {ip}", "Verbindung zu {ip} wird hergestellt", False),
    ("{name} saved {file}", "{name} hat {file} gespeichert", False),
    ("{name} needs {number} MB of disk space", "{name} benötigt {number} MB Speicherplatz", False),
    ("Downloading {file} from {url}", "{file} wird von {url} heruntergeladen", False),
    ("Contact {name} at {email}", "Kontaktieren Sie {name} unter {email}", False),
    # held out: only in the test set
    ("Remove {name} from the list", "{name} aus der Liste entfernen", True),
    ("Battery at {percent}", "Akku bei {percent}", True),
    ("Moved {file} to {path}", "{file} wurde nach {path} verschoben", True),
    ("No route to host {ip}", "Keine Route zum Rechner {ip}", True),
    ("Report bugs to {email}", "Fehler bitte an {email} melden", True),
    ("{name} {version} is available", "{name} {version} ist verfügbar", True),
    ("Open {url} in the browser", "{url} im Browser öffnen", True),
)
_FIELD = re.compile(r"\{(\w+)\}")


def template_examples(
    split: str, count: int, seed: int, word_names: float = 0.0
) -> list[CopyExample]:
    """`count` template sentences with values of `split`; the test split also uses the
    held-out templates, training and dev only the others. A share `word_names` of the training
    names is made of English words (``draw_value``)."""
    rng = random.Random(seed)
    words = english_words() if word_names else ()
    templates = [t for t in TEMPLATES if split == "test" or not t[2]]
    examples = []
    for _ in range(count):
        english, german, _ = rng.choice(templates)
        kinds = _FIELD.findall(english)
        values = {kind: draw_value(kind, split, rng, word_names, words) for kind in kinds}
        en = {k: v + "%" if k == "percent" else v for k, v in values.items()}
        de = {k: v + " %" if k == "percent" else v for k, v in values.items()}
        must = tuple(tok for kind in kinds for tok in values[kind].split())
        examples.append(
            CopyExample(
                english.format(**en), german.format(**de), must, "template:" + ",".join(kinds)
            )
        )
    return examples


# --- corpus pairs that keep a source token ----------------------------------------------------

NAME_MAX_ZIPF = 3.0  # a capitalised word rarer than this in English reads as a name
_STRIP = "\"'.,;:!?()[]«»„“”‚‘’…"


def _tokens(text: str) -> list[str]:
    return [t.strip(_STRIP) for t in text.split() if t.strip(_STRIP)]


def copy_worthy_tokens(source: str, target: str) -> tuple[str, ...]:
    """Source tokens the reference keeps verbatim and that a translation must keep: with a
    digit, an inner capital (GParted, KDE), inner punctuation (a path, an address), or a
    capitalised word after the first that is rare as an English word (a name: Kimmo, Orage;
    not the Title Case of a label such as "Copy Link")."""
    from wordfreq import zipf_frequency  # a data dependency (the [dev] extra)

    target_tokens = set(_tokens(target))
    kept = []
    for index, token in enumerate(_tokens(source)):
        if len(token) < 2 or token not in target_tokens or token in kept:
            continue
        inner = token[1:]
        if (
            any(c.isdigit() for c in token)
            or any(c.isupper() for c in inner)
            or any(c in "./@:_-\\" for c in inner)
            or (
                index > 0
                and token[0].isupper()
                and zipf_frequency(token.lower(), "en") < NAME_MAX_ZIPF
            )
        ):
            kept.append(token)
    return tuple(kept)


def corpus_copy_examples(pairs: Sequence[SentencePair]) -> list[CopyExample]:
    out = []
    for pair in pairs:
        must = copy_worthy_tokens(pair.source, pair.target)
        if must:
            out.append(CopyExample(pair.source, pair.target, must, "corpus"))
    return out


def copy_testset(corpus: str = "v2", templates: int = 600) -> list[CopyExample]:
    """Version COPY_TESTSET_VERSION of the copy test set: the corpus's test-split pairs whose
    reference keeps a copy-worthy source token, then `templates` template sentences with test
    values (and the held-out templates)."""
    test = corpus_splits(corpus)["test"]
    return corpus_copy_examples(test) + template_examples("test", templates, TEST_SEED)


def testset_sha256(examples: Sequence[CopyExample]) -> str:
    digest = hashlib.sha256()
    for e in examples:
        digest.update(f"{e.source}\t{e.target}\t{' '.join(e.must_copy)}\t{e.kind}\n".encode())
    return digest.hexdigest()


# --- the metric -------------------------------------------------------------------------------


def copied_verbatim(token: str, output: str) -> bool:
    """`token` occurs in `output` not inside a longer word or number."""
    return re.search(rf"(?<![\w]){re.escape(token)}(?![\w])", output) is not None


def copy_fidelity(examples: Sequence[CopyExample], outputs: Sequence[str]) -> dict[str, float]:
    """The share of must-copy tokens found verbatim in the outputs, overall and by kind."""
    found: dict[str, list[int]] = {}
    for example, output in zip(examples, outputs, strict=True):
        group = "corpus" if example.kind == "corpus" else "template"
        for token in example.must_copy:
            hit = int(copied_verbatim(token, output))
            for key in ("all", group):
                found.setdefault(key, []).append(hit)
    return {
        f"copy_fidelity_{key}" if key != "all" else "copy_fidelity": round(100 * sum(v) / len(v), 2)
        for key, v in found.items()
    }


def main() -> None:
    examples = copy_testset()
    corpus = sum(e.kind == "corpus" for e in examples)
    tokens = sum(len(e.must_copy) for e in examples)
    print(
        f"copy test set v{COPY_TESTSET_VERSION}: {len(examples)} sentences ({corpus} corpus, "
        f"{len(examples) - corpus} template), {tokens} must-copy tokens, "
        f"sha256 {testset_sha256(examples)}"
    )


if __name__ == "__main__":
    main()
