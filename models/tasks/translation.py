"""English -> German sentence pairs from the gettext catalogs that Debian packages ship.

Reproducible by construction: the packages (name and exact version, Debian 12 "bookworm") are
pinned below, fetched with ``apt-get download`` into data/debs/, and every German catalog
(``.../de/LC_MESSAGES/*.mo``) is taken out of the package's data archive and read with the
standard library's ``gettext.GNUTranslations``. msgid is the English source, msgstr the human
German translation.

Cleaning keeps plain sentences and labels: entries with format placeholders (``%s``,
``%(name)s``, ``{0}``, ``$VAR``), markup (``<b>``, ``&amp;``), several lines or translator
credits are dropped; keyboard accelerators (``_File``, ``&Open``, ``~Save``) are removed; a
trailing colon is removed from both sides; sources of up to 25 words are kept. A one-word source
must read as a label ("Cancel", "OK", "Read-only", "Open…"), not an identifier ("GtkWindow",
"default:LTR"), and its translation may have at most four words. Sources are deduplicated (the
most frequent translation wins, ties broken alphabetically) and split by a stable hash of the
source, so a source never appears in two splits.

Two corpus versions exist (``CORPORA``), each with its own folder under data/ and its own
tokenizers: ``v1`` (58 packages, sources of 2-25 words) is what the shipped
``seq2seq-translate-a*`` models and the reference file were built from; ``v2`` adds one-word
labels and many more packages (KDE, GNOME, Xfce, MATE, LibreOffice, system tools) for the
``seq2seq-translate-big-*`` recipes. Building needs a Debian mirror; tests use fixtures.

The subword tokenizers are in translation_tokenizers.py, the training recipe in
translation_recipe.py and the served model in translation_serving.py.
"""

from __future__ import annotations

import functools
import gettext
import hashlib
import re
import subprocess
import tarfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

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

# v2 adds these to the v1 packages: KDE, GNOME, Xfce, MATE and Cinnamon with their
# applications, office, graphics, audio and mail programs, games and system tools. Each adds at
# least 30 new sources; catalogs that are mostly place names (kstars-data, kgeography-data,
# libgweather-4-common) are left out.
MORE_PACKAGES = (
    ("aisleriot", "1:3.22.23-1"),
    ("akregator", "4:22.12.3-1"),
    ("ark", "4:22.12.3-1+deb12u1"),
    ("atril-common", "1.26.0-2+deb12u4"),
    ("audacious-plugins-data", "4.2-1"),
    ("audacious", "4.2-1"),
    ("audacity-data", "3.2.4+dfsg-1"),
    ("baobab", "43.0-1"),
    ("blueman", "2.3.5-2+b1"),
    ("bookworm", "1.1.2+git20210715-2"),
    ("brasero-common", "3.12.3-2"),
    ("caja-common", "1.26.1-1+deb12u1"),
    ("cantor", "4:22.12.3-1"),
    ("catfish", "4.16.4-2"),
    ("celluloid", "0.20-2+b1"),
    ("cheese-common", "43.0-1"),
    ("cherrytree", "0.99.48+dfsg-1"),
    ("cinnamon-l10n", "5.6.1-2"),
    ("claws-mail-i18n", "4.1.1-2"),
    ("darktable", "4.2.1-4"),
    ("dconf-editor", "43.0-1"),
    ("deluge-common", "2.0.3-4"),
    ("devhelp-common", "43.0-3"),
    ("dia-common", "0.97.3+git20220525-5"),
    ("digikam-data", "4:7.9.0-1"),
    ("dolphin", "4:22.12.3-1"),
    ("easytag", "2.4.3-5+b1"),
    ("engrampa-common", "1.26.0-1+deb12u2"),
    ("entangle", "3.0-3"),
    ("eom-common", "1.26.0-2"),
    ("epiphany-browser-data", "43.1-1"),
    ("evolution-common", "3.46.4-2+deb12u1"),
    ("evolution-data-server-common", "3.46.4-2+deb12u1"),
    ("file-roller", "43.0-1"),
    ("filezilla-common", "3.63.0-1+deb12u3"),
    ("firewalld", "1.3.3-1~deb12u2"),
    ("flatpak", "1.14.10-1~deb12u2"),
    ("foliate", "2.6.4-1+dfsg3"),
    ("fontforge-common", "1:20230101~dfsg-1.1~deb12u1"),
    ("freeciv-data", "3.0.6-1+deb12u1"),
    ("gajim", "1.7.3-2"),
    ("gdm3", "43.0-3"),
    ("geany-common", "1.38-1"),
    ("geary", "43.0-1+b1"),
    ("git", "1:2.39.5-0+deb12u3"),
    ("gitg", "41-2"),
    ("gnome-boxes", "43.2-1"),
    ("gnome-builder", "43.6-3"),
    ("gnome-calculator", "1:43.0.1-2"),
    ("gnome-calendar", "43.1-2"),
    ("gnome-chess", "1:43.1-1"),
    ("gnome-clocks", "43.0-1"),
    ("gnome-contacts", "43.1-1"),
    ("gnome-disk-utility", "43.0-1"),
    ("gnome-initial-setup", "43.2-6"),
    ("gnome-keyring", "42.1-1+b2"),
    ("gnome-logs", "43.0-1"),
    ("gnome-maps", "43.5-2~deb12u1"),
    ("gnome-mines", "1:40.1-1"),
    ("gnome-music", "42.1-1"),
    ("gnome-nettool", "42.0-1"),
    ("gnome-nibbles", "1:3.38.2-2+b1"),
    ("gnome-photos", "43.0-2"),
    ("gnome-robots", "1:40.0-2"),
    ("gnome-session-common", "43.0-1+deb12u1"),
    ("gnome-settings-daemon-common", "43.0-4"),
    ("gnome-sudoku", "1:43.1-1"),
    ("gnome-system-monitor", "42.0-2"),
    ("gnome-text-editor", "43.2-1"),
    ("gnome-tweaks", "42~beta-4"),
    ("gnote", "43.1-1"),
    ("gnucash-common", "1:4.13-1"),
    ("gnumeric-common", "1.12.55-1"),
    ("gpa", "0.10.0-5"),
    ("gphoto2", "2.5.28-2"),
    ("gramps", "5.1.5-1"),
    ("grisbi-common", "2.0.5-1"),
    ("grub-common", "2.06-13+deb12u2"),
    ("gucharmap", "1:15.0.2-1"),
    ("gufw", "22.04.0-1"),
    ("gutenprint-locales", "5.3.4.20220624T01008808d602-1"),
    ("gwenview", "4:22.12.3-1"),
    ("handbrake", "1.6.1+ds1-1"),
    ("hardinfo", "0.5.1+git20180227-2.1+b1"),
    ("hexchat-common", "2.16.1-1"),
    ("homebank-data", "5.6.2-1"),
    ("hugin-data", "2022.0.0+dfsg-2"),
    ("iagno", "1:3.38.1-2"),
    ("juk", "4:22.12.3-1"),
    ("kalzium-data", "4:22.12.3-1"),
    ("kcachegrind", "4:22.12.3-1"),
    ("kcalc", "4:22.12.3-1"),
    ("kdeconnect", "22.12.3-1"),
    ("kdenlive-data", "22.12.3-2+deb12u2"),
    ("kdepim-runtime", "4:22.12.3-1"),
    ("kget", "4:22.12.3-1"),
    ("kgpg", "4:22.12.3-1"),
    ("khelpcenter", "4:22.12.3-1"),
    ("kig", "4:22.12.3-1"),
    ("kinfocenter", "4:5.27.5-2"),
    ("kio", "5.103.0-1+deb12u1"),
    ("kleopatra", "4:22.12.3-1"),
    ("kmail", "4:22.12.3-1"),
    ("kmines", "4:22.12.3-1"),
    ("knavalbattle", "4:22.12.3-1"),
    ("kolourpaint", "4:22.12.3-1"),
    ("kompare", "4:22.12.3-1"),
    ("konqueror", "4:22.12.3-1"),
    ("konsole", "4:22.12.3-1+deb12u1"),
    ("kontact", "4:22.12.3-1"),
    ("korganizer", "4:22.12.3-1"),
    ("kpat", "4:22.12.3-1"),
    ("ksudoku", "4:22.12.3-1"),
    ("ktouch-data", "4:22.12.3-1"),
    ("kwordquiz", "4:22.12.3-1"),
    ("libgphoto2-l10n", "2.5.30-1"),
    ("libgtk-4-common", "4.8.3+ds-2+deb12u1"),
    ("libgtk2.0-common", "2.24.33-2+deb12u1"),
    ("libkf5akonadi-data", "4:22.12.3-1"),
    ("libkf5calendarsupport-data", "4:22.12.3-1"),
    ("libkf5eventviews-data", "4:22.12.3-1"),
    ("libkf5incidenceeditor-data", "22.12.3-1"),
    ("libkf5ksieve-data", "4:22.12.3-1+deb12u1"),
    ("libkf5mailcommon-data", "4:22.12.3-1"),
    ("libkf5pimcommon-data", "4:22.12.3-1"),
    ("libkf5textwidgets-data", "5.103.0-1"),
    ("libkf5xmlgui-data", "5.103.0-1"),
    ("libsane-common", "1.2.1-2"),
    ("libxfce4ui-common", "4.18.2-2"),
    ("lokalize", "4:22.12.3-1"),
    ("lollypop", "1.4.37-1"),
    ("lxpanel-data", "0.10.1-2"),
    ("lyx-common", "2.3.7-1"),
    ("marble-data", "4:22.12.3-1"),
    ("marco-common", "1.26.1-3+deb12u2"),
    ("mate-control-center-common", "1.26.0-2+deb12u1"),
    ("mate-desktop-common", "1.26.0-2"),
    ("mate-panel-common", "1.27.0-1"),
    ("mate-power-manager-common", "1.26.0-2+deb12u1"),
    ("mate-settings-daemon-common", "1.26.0-1+deb12u1"),
    ("mate-terminal-common", "1.26.0-2"),
    ("meld", "3.22.0-2"),
    ("menulibre", "2.2.2-2"),
    ("mousepad", "0.5.10-2"),
    ("mutter-common", "43.8-0+deb12u1"),
    ("mypaint-data", "2.0.1-9"),
    ("network-manager-gnome", "1.30.0-2"),
    ("okular", "4:22.12.3-1+deb12u1"),
    ("orca", "43.1-1"),
    ("packagekit", "1.2.6-5+deb12u1"),
    ("parole", "4.16.0-3"),
    ("partitionmanager", "22.12.3-1"),
    ("pavucontrol", "5.0-2"),
    ("pcmanfm", "1.3.2-1"),
    ("picard", "2.8.5-1+b1"),
    ("pidgin-data", "2.14.12-1"),
    ("pitivi", "2022.06-1+b1"),
    ("plasma-desktop-data", "4:5.27.5-2"),
    ("plasma-discover-common", "5.27.5-2+deb12u1"),
    ("pluma-common", "1.26.0-1+deb12u1"),
    ("polari", "43.0-1"),
    ("pulseaudio", "16.1+dfsg1-2+b1"),
    ("quadrapassel", "1:40.2-1"),
    ("rednotebook", "2.29.3+ds-1"),
    ("remmina-common", "1.4.29+dfsg-1"),
    ("ristretto", "0.12.4-1"),
    ("seahorse", "43.0-1"),
    ("shotwell-common", "0.30.17-1"),
    ("simple-scan", "42.5-2"),
    ("skanlite", "22.12.3-1"),
    ("skrooge-common", "2.29.0-1"),
    ("sound-juicer", "3.38.0-2.1"),
    ("soundconverter", "4.0.3-2"),
    ("step", "4:22.12.3-1"),
    ("synaptic", "0.91.3"),
    ("system-config-printer-common", "1.5.18-1"),
    ("systemd", "252.39-1~deb12u2"),
    ("tali", "1:40.9-1"),
    ("thunar-data", "4.18.4-1"),
    ("udisks2", "2.9.4-4+deb12u2"),
    ("unattended-upgrades", "2.9.1+nmu3"),
    ("usermode", "1.114-3+b1"),
    ("viking", "1.10-2"),
    ("vinagre", "3.22.0-8.1"),
    ("wesnoth-1.16-data", "1:1.16.9-1"),
    ("wxmaxima", "22.12.0-1"),
    ("xfburn", "0.6.2-1+b1"),
    ("xfce4-panel", "4.18.2-1"),
    ("xfce4-power-manager-data", "4.18.1-1"),
    ("xfce4-session", "4.18.1-1"),
    ("xfce4-settings", "4.18.2-1"),
    ("xfce4-terminal", "1.0.4-1"),
    ("xfdesktop4-data", "4.18.1-1"),
    ("xfwm4", "4.18.0-1"),
    ("xournalpp", "1.1.3-1"),
    ("xsane-common", "0.999-12.1~deb12u1"),
    ("zenity-common", "3.44.0-1"),
    ("zim", "0.75.1-1"),
)


@dataclass(frozen=True)
class CorpusVersion:
    """One reproducible corpus: the packages it reads, its shortest source and its folder."""

    name: str
    packages: tuple[tuple[str, str], ...]
    min_words: int
    directory: Path


CORPORA = {
    "v1": CorpusVersion("v1", PINNED_PACKAGES, 2, DATA_DIR),
    "v2": CorpusVersion("v2", PINNED_PACKAGES + MORE_PACKAGES, 1, ROOT / "data" / "translation-v2"),
}


def entry_corpus(entry: dict) -> str:
    """The corpus version a translation checkpoint's manifest entry was trained on (entries
    written before versions existed are v1's)."""
    return (entry.get("data") or {}).get("corpus", "v1")


MIN_WORDS, MAX_WORDS = 2, 25  # v1's source length; v2 keeps one-word labels too
MAX_LABEL_TARGET_WORDS = 4  # a one-word source's translation
TEST_PERCENT, DEV_PERCENT = 2, 1

_PLACEHOLDER = re.compile(
    r"%(?![\s.,;)]|$)"  # printf, gcc's %qD / %<, python %(name)s, Qt %1; not "50% "
    r"|\{[^{}]*\}|\$[{(]?\w+|@\w+@"  # {0} / {name}, $VAR / ${VAR} / $(VAR), @VAR@
)
_MARKUP = re.compile(r"<[^<>]*>|&[#\w]+;")
_ACCELERATOR = re.compile(r"(?<![\w_])[_&~](?=\w)|(?<=\w)[_&~](?=\w)")
# A one-word source that reads as a label: capitalised, lower-case or all-caps words joined by
# hyphens or apostrophes, with an optional ellipsis or final mark; not CamelCase identifiers.
_LABEL_PART = r"(?:[A-Z]+|[A-Za-z][a-z]*)"
_LABEL = re.compile(rf"{_LABEL_PART}(?:[-'’]{_LABEL_PART})*(?:\.\.\.|…|[.!?])?")
# msgids whose "translation" is the translators' names: GNOME's translator-credits, KDE's
# "Your names" and "Your emails" (context NAME/EMAIL OF TRANSLATORS) and older spellings.
# The label "Translator credits" is a real message and stays.
_CREDITS = {
    "translator-credits",
    "translator_credits",
    "translator-credits-url",
    "Your names",
    "Your emails",
    "NAME OF TRANSLATORS",
    "EMAIL OF TRANSLATORS",
    "ROLES_OF_TRANSLATORS",
    "CREDIT_FOR_TRANSLATORS",
}


@dataclass(frozen=True)
class SentencePair:
    source: str  # English
    target: str  # German


def deb_filename_glob(package: str, version: str) -> str:
    version = version.replace(":", "%3a")  # apt-get download escapes the epoch separator
    return f"{package}_{version}_*.deb"


def fetch_debs(
    deb_dir: Path = DEB_DIR, packages: tuple[tuple[str, str], ...] = PINNED_PACKAGES
) -> list[Path]:
    """Download the pinned packages that are not cached yet; return all their .deb files."""
    deb_dir.mkdir(parents=True, exist_ok=True)
    missing = [
        f"{package}={version}"
        for package, version in packages
        if not list(deb_dir.glob(deb_filename_glob(package, version)))
    ]
    if missing:
        subprocess.run(["apt-get", "download", *missing], cwd=deb_dir, check=True)
    return [next(deb_dir.glob(deb_filename_glob(p, v))) for p, v in packages]


def is_german_catalog(member: str) -> bool:
    path = PurePosixPath(member)
    return (
        path.suffix == ".mo"
        and path.parent.name == "LC_MESSAGES"
        and path.parent.parent.name == "de"
    )


def extract_german_catalogs(deb: Path, into: Path) -> list[Path]:
    """Take one .deb's German .mo catalogs out of its data archive (once); return them, sorted.

    Only regular files are taken: a catalog that is a link would be read twice."""
    target = into / deb.stem
    if not target.exists():
        partial = into / f".{deb.stem}.partial"
        partial.mkdir(parents=True, exist_ok=True)
        with subprocess.Popen(
            ["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE
        ) as tar:
            with tarfile.open(fileobj=tar.stdout, mode="r|") as archive:
                for member in archive:
                    if member.isfile() and is_german_catalog(member.name):
                        archive.extract(member, partial, filter="data")
        if tar.returncode:
            raise subprocess.CalledProcessError(
                tar.returncode, ["dpkg-deb", "--fsys-tarfile", str(deb)]
            )
        partial.rename(target)
    return sorted(p for p in target.rglob("*.mo") if is_german_catalog(p.as_posix()))


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


def is_translator_credits(msgid: str) -> bool:
    return msgid.strip() in _CREDITS


def is_label(word: str) -> bool:
    """Whether a one-word source reads as a UI label ("Cancel", "OK", "Open…")."""
    return _LABEL.fullmatch(word) is not None


def clean_pair(source: str, target: str, min_words: int = MIN_WORDS) -> SentencePair | None:
    """A plain-sentence pair, or None when the entry is not one.

    ``min_words`` is 2 for corpus v1 and 1 for v2; a one-word source must be a label."""
    if any("\n" in text or "\t" in text for text in (source, target)):
        return None
    if is_translator_credits(source):
        return None
    if any(_PLACEHOLDER.search(text) or _MARKUP.search(text) for text in (source, target)):
        return None
    if source.count("_") > 1:
        return None  # identifiers such as gtk_widget_show, not a mnemonic
    source, target = (_ACCELERATOR.sub("", text).strip() for text in (source, target))
    source, target = (
        text[:-1].rstrip() if text.endswith(":") else text for text in (source, target)
    )
    words = len(source.split())
    if not (min_words <= words <= MAX_WORDS) or not target:
        return None
    if words == 1 and not (is_label(source) and len(target.split()) <= MAX_LABEL_TARGET_WORDS):
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


def pairs_from_catalogs(catalogs: Iterable[Path], min_words: int = MIN_WORDS) -> list[SentencePair]:
    cleaned = (clean_pair(s, t, min_words) for path in catalogs for s, t in read_catalog(path))
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
    deb_dir: Path = DEB_DIR, out_dir: Path | None = None, corpus: str = "v1"
) -> dict[str, list[SentencePair]]:
    """Fetch, extract, clean, dedupe and split one corpus version; cached as TSV files in its
    folder (data/translation/ for v1)."""
    version = CORPORA[corpus]
    out_dir = version.directory if out_dir is None else out_dir
    if all((out_dir / f"{name}.tsv").exists() for name in ("train", "dev", "test")):
        return read_splits(out_dir)
    splits = split_pairs(pairs_from_catalogs(german_catalogs(version, deb_dir), version.min_words))
    write_splits(splits, out_dir)
    return splits


def german_catalogs(version: CorpusVersion, deb_dir: Path = DEB_DIR) -> list[Path]:
    """Every German catalog of a corpus version's packages (fetched and extracted once)."""
    extracted = deb_dir / "extracted"
    extracted.mkdir(parents=True, exist_ok=True)
    debs = fetch_debs(deb_dir, version.packages)
    return [mo for deb in debs for mo in extract_german_catalogs(deb, extracted)]


def frequent_training_pairs(corpus: str, k: int) -> list[SentencePair]:
    """The k training pairs of a corpus version whose sources the most catalogs carry (ties:
    alphabetical): what a reader tries first, such as Cancel, Delete, Open File."""
    return list(_training_pairs_by_frequency(corpus)[:k])


@functools.cache
def _training_pairs_by_frequency(corpus: str) -> tuple[SentencePair, ...]:
    """Every training pair of a corpus version, the most frequent source first (counting
    cleans every catalog entry again: seconds, so once per process)."""
    version = CORPORA[corpus]
    counts = source_frequencies(german_catalogs(version), version.min_words)
    train = build_corpus(corpus=corpus)["train"]
    return tuple(sorted(train, key=lambda p: (-counts[p.source], p.source)))


def source_frequencies(catalogs: Iterable[Path], min_words: int = MIN_WORDS) -> Counter:
    """How many catalog entries, after cleaning, carry each source: a string that many
    programs show ("Cancel", "Open File") counts once per catalog that has it."""
    cleaned = (clean_pair(s, t, min_words) for path in catalogs for s, t in read_catalog(path))
    return Counter(pair.source for pair in cleaned if pair is not None)
