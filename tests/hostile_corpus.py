"""A hostile corpus: requests a crowd, a fuzzer or an attacker sends, for every field of every
endpoint (and the pages that carry a figure's state in their address, and the static files).

Each `Probe` is one request. tests/test_hostile_corpus.py sends them all to the site as served
(content/ and checkpoints/) and checks that none gets a 5xx and that every refusal is a sentence
of ours: it names the field, says what to change, counts items from 1 for a reader, and never
passes on pydantic's or Python's own wording. `python -m tests.hostile_corpus` prints the corpus
size by endpoint.

The values are what a hand-written client gets wrong: wrong JSON types (a string for a number,
a boolean, null, a list, an object), digits that are not ASCII ("²", "٣", full-width "１"),
numbers of 4,301 digits (past Python's int-from-text limit) or 1e400 (past a float), NaN and
infinity spelled as text, empty and oversized text, nesting, unknown fields, unknown paths, and
Range headers no file can satisfy.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

MISSING: Any = object()

FIVE = [[0.15, 0.2], [0.85, 0.1], [0.5, 0.45], [0.9, 0.8], [0.2, 0.85]]
FIVE_TEXT = ";".join(f"{x},{y}" for x, y in FIVE)
HUGE_DIGITS = "9" * 4301  # one past int()'s default limit of 4,300 digits
UNICODE_DIGITS = ["²", "٣", "１", "½", "Ⅻ", "𝟙"]
NAN_TEXT = ["NaN", "nan", "inf", "-Infinity", "1e400", "-1e400"]
OVERSIZED = "x" * 10_000
HTMX = {"HX-Request": "true"}

# Wrong JSON values for a field of any type: each names what it is, for the test ids.
WRONG_JSON: dict[str, Any] = {
    "true": True,
    "null": None,
    "empty string": "",
    "a number as text": "0.5",
    "an object": {"a": 1},
    "a list": [1, 2],
    "nested lists": [[[[[]]]]],
    "a unicode digit": "²",
    "a full-width digit": "１",
    "NaN as text": "NaN",
    "infinity as text": "inf",
    "oversized text": OVERSIZED,
    "a negative number": -1,
    "a large integer": 10**30,
    "a fraction": 0.5,
}
# Raw JSON spellings json.dumps cannot write: a 4,301-digit number, 1e400, NaN literals.
RAW_NUMBERS = {
    "4,301 digits": HUGE_DIGITS,
    "1e400": "1e400",
    "NaN literal": "NaN",
    "Infinity literal": "-Infinity",
    "1e-400": "1e-400",
}
# Wrong text for a query-string field (numbers, choices and text alike).
WRONG_TEXT: dict[str, str] = {
    "empty": "",
    "a word": "abc",
    "4,301 digits": HUGE_DIGITS,
    "a negative 4,301 digits": "-" + HUGE_DIGITS,
    "a fraction": "0.5",
    "a large integer": "1" + "0" * 30,
    "oversized": OVERSIZED,
    "a null byte": "1\x00",
    "spaces": "   ",
    "json": '{"a": [1]}',
    **{f"unicode digit {d}": d for d in UNICODE_DIGITS},
    **{f"spelled {t}": t for t in NAN_TEXT},
}


@dataclass(frozen=True)
class Probe:
    """One hostile request. `field` is the field the refusal must name (None: any sentence);
    `item` the 0-based index of the list item at fault, which a reader's sentence counts
    from 1. `expect` lists the acceptable statuses beyond "not 5xx" (empty: anything but 5xx)."""

    name: str
    method: str
    path: str
    json_body: Any = MISSING
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    field: str | None = None
    item: int | None = None
    expect: tuple[int, ...] = ()

    def request(self) -> dict[str, Any]:
        """The keyword arguments of TestClient.request (or httpx.request) for this probe."""
        kwargs: dict[str, Any] = {"method": self.method, "url": self.path}
        headers = dict(self.headers)
        if self.json_body is not MISSING:
            kwargs["content"] = json.dumps(self.json_body).encode()
            headers.setdefault("content-type", "application/json")
        elif self.content is not None:
            kwargs["content"] = self.content
            headers.setdefault("content-type", "application/json")
        # header values as UTF-8 bytes: a hostile Range may hold digits that are not ASCII
        kwargs["headers"] = {name: value.encode() for name, value in headers.items()}
        return kwargs

    @property
    def family(self) -> str:
        """The endpoint, for counting the corpus: the path without its query."""
        path = self.path.split("?")[0]
        return f"{self.method} {path if len(path) < 60 else path[:40] + '…'}"


def qs(params: dict[str, Any] | list[tuple[str, Any]]) -> str:
    return urlencode(params, quote_via=quote)


# ---- JSON bodies: POST endpoints ----

POST_BODIES: dict[str, dict[str, Any]] = {
    "/api/pointer/hull": {"points": FIVE},
    "/api/pointer/tsp": {"points": FIVE},
    "/api/pointer/sort": {"values": [0.62, 0.15, 0.87, 0.4, 0.05]},
    "/api/entmax": {"scores": [0.4, 1.2, 0.6], "alpha": 1.5},
    "/api/seq2seq/inflect": {"lemma": "swim", "language": "en", "features": "V;PST"},
    "/api/seq2seq/translate": {"text": "Could not open the file."},
}
POST_FIELDS: dict[str, list[str]] = {
    "/api/pointer/hull": ["points", "decoder", "beam_width", "samples", "seed", "alpha", "model"],
    "/api/pointer/tsp": ["points", "decoder", "beam_width", "samples", "seed", "alpha", "model"],
    "/api/pointer/sort": ["values", "decoder", "beam_width", "samples", "seed", "alpha", "model"],
    "/api/entmax": ["scores", "alpha", "labels"],
    "/api/seq2seq/inflect": [
        "lemma",
        "language",
        "features",
        "alpha",
        "inference_alpha",
        "beam_width",
    ],
    "/api/seq2seq/translate": ["text", "alpha", "inference_alpha", "beam_width"],
}
# What an item of a list field is: the list's own wrong items go through here.
LIST_ITEMS = {"points": [0.5, 0.5], "values": 0.5, "scores": 0.5, "labels": "w"}


def raw_body(body: dict[str, Any], name: str, raw: str) -> bytes:
    """`body` as JSON with field `name` spelled `raw` (a JSON token json.dumps cannot write)."""
    marker = "__RAW__"
    text = json.dumps({**body, name: marker})
    return text.replace(json.dumps(marker), raw).encode()


def post_probes() -> list[Probe]:
    probes: list[Probe] = []
    for path, body in POST_BODIES.items():
        for name in POST_FIELDS[path]:
            for what, value in WRONG_JSON.items():
                if value == body.get(name):
                    continue
                probes.append(Probe(f"{path} {name}: {what}", "POST", path, {**body, name: value}))
            for what, raw in RAW_NUMBERS.items():
                probes.append(
                    Probe(f"{path} {name}: {what}", "POST", path, content=raw_body(body, name, raw))
                )
            if name in body:
                rest = {k: v for k, v in body.items() if k != name}
                probes.append(Probe(f"{path} {name}: missing", "POST", path, rest, field=name))
        for name in [n for n in POST_FIELDS[path] if n in LIST_ITEMS]:
            probes += list_item_probes(path, body, name)
        probes += [
            Probe(f"{path}: unknown field", "POST", path, {**body, "evil": 1}, field="evil"),
            Probe(f"{path}: __proto__", "POST", path, {**body, "__proto__": {"x": 1}}),
            Probe(f"{path}: a list body", "POST", path, [body]),
            Probe(f"{path}: a string body", "POST", path, "hello"),
            Probe(f"{path}: null body", "POST", path, None),
            Probe(f"{path}: empty object", "POST", path, {}),
            Probe(f"{path}: no body", "POST", path, content=b""),
            Probe(f"{path}: truncated JSON", "POST", path, content=b'{"a": [1, 2'),
            Probe(f"{path}: not UTF-8", "POST", path, content=b'{"x": "\xff\xfe"}'),
            Probe(f"{path}: deep nesting", "POST", path, content=b"[" * 5000 + b"]" * 5000),
            Probe(f"{path}: digits body", "POST", path, content=HUGE_DIGITS.encode()),
            Probe(
                f"{path}: form body",
                "POST",
                path,
                content=b"a=1",
                headers={"content-type": "application/x-www-form-urlencoded"},
            ),
            Probe(
                f"{path}: as htmx, unknown field",
                "POST",
                path,
                {**body, "evil": 1},
                headers=HTMX,
                field="evil",
            ),
            Probe(f"{path}: GET", "GET", path),
        ]
    return probes


def list_item_probes(path: str, body: dict[str, Any], name: str) -> list[Probe]:
    """A list field with one bad item (the third), for the API and for a reader's widget."""
    good = LIST_ITEMS[name]
    items = list(body.get(name) or [good, good, good])
    while len(items) < 3:
        items.append(good)
    if name == "points":
        wrong_items = {"x out of range": [1.5, 0.2], "three numbers": [0.1, 0.2, 0.3]}
        wrong_items |= {"x a unicode digit": ["²", 0.2], "a point as text": "0.1,0.2"}
        wrong_items |= {"x true": [True, 0.2], "y null": [0.1, None]}
    elif name == "labels":
        wrong_items = {"a number": 3, "oversized": "w" * 65, "null": None, "a list": ["w"]}
    else:
        wrong_items = {"text": "abc", "a unicode digit": "٣", "true": True, "a list": [1]}
        wrong_items |= {"huge": 1e300, "null": None}
    probes = []
    for what, item in wrong_items.items():
        sent = [*items[:2], item, *items[3:]]
        bad = {**body, name: sent}
        if name == "labels":
            bad["scores"] = [0.1] * len(sent)
        probes.append(Probe(f"{path} {name}[2]: {what}", "POST", path, bad, field=name, item=2))
        probes.append(
            Probe(
                f"{path} {name}[2]: {what} (htmx)",
                "POST",
                path,
                bad,
                headers=HTMX,
                field=name,
                item=2,
            )
        )
    too_many = {**body, name: [good] * 600}
    if name == "points":
        too_many[name] = [[i / 700, (i * 7 % 600) / 700] for i in range(600)]
    probes.append(Probe(f"{path} {name}: 600 items", "POST", path, too_many, field=name))
    probes.append(Probe(f"{path} {name}: empty list", "POST", path, {**body, name: []}))
    return probes


# ---- query strings: GET endpoints ----

GET_QUERIES: dict[str, dict[str, str]] = {
    "/api/pointer/hull/board/hull": {"points": FIVE_TEXT},
    "/api/pointer/tsp/board/tsp": {"points": FIVE_TEXT, "decoder": "beam", "beam_width": "4"},
    "/api/pointer/sort/board/sort": {"values": "0.6,0.1,0.9"},
    "/api/entmax/figure": {"text": "the cat sat", "scores": "0.1,0.2,0.3", "alpha": "1.5"},
    "/api/seq2seq/inflect/figure": {"lemma": "swim", "language": "en", "features": "V;PST"},
    "/api/seq2seq/translate/figure": {"text": "Cancel"},
    "/api/seq2seq/inflect/cells": {"language": "de", "features": "N;PL"},
    "/api/routing/attention": {"points": FIVE_TEXT, "layer": "1", "head": "1", "city": "1"},
    "/api/routing/reinforce": {"points": FIVE_TEXT, "samples": "4", "seed": "0"},
}
GET_FIELDS: dict[str, list[str]] = {
    "/api/pointer/hull/board/hull": [
        "points",
        "decoder",
        "beam_width",
        "samples",
        "seed",
        "alpha",
        "model",
        "step",
    ],
    "/api/pointer/tsp/board/tsp": ["points", "beam_width", "step"],
    "/api/pointer/sort/board/sort": ["values", "decoder", "samples", "alpha", "step"],
    "/api/entmax/figure": ["text", "scores", "alpha", "example"],
    "/api/seq2seq/inflect/figure": [
        "lemma",
        "language",
        "features",
        "mode",
        "alpha",
        "inference_alpha",
        "base_alpha",
        "beam_width",
        "compare",
        "example",
    ],
    "/api/seq2seq/translate/figure": [
        "text",
        "mode",
        "alpha",
        "inference_alpha",
        "beam_width",
        "compare",
        "example",
        "beam",
        "ia",
    ],
    "/api/seq2seq/inflect/cells": ["language", "features"],
    "/api/routing/attention": ["points", "layer", "head", "city"],
    "/api/routing/reinforce": ["points", "samples", "seed"],
}
# Free text a reader may type: any text is a fair value there, so only the limits are probed.
FREE_TEXT = {"text", "lemma", "features"}


def get_probes() -> list[Probe]:
    probes: list[Probe] = []
    for path, query in GET_QUERIES.items():
        for name in GET_FIELDS[path]:
            for what, value in WRONG_TEXT.items():
                if name in FREE_TEXT and what not in ("empty", "oversized", "a null byte"):
                    continue
                url = f"{path}?{qs({**query, name: value})}"
                probes.append(Probe(f"{path} {name}: {what}", "GET", url))
                if what in ("4,301 digits", "unicode digit ²", "oversized"):
                    probes.append(Probe(f"{path} {name}: {what} (htmx)", "GET", url, headers=HTMX))
            repeated = f"{path}?{qs([*query.items(), (name, '1'), (name, '2')])}"
            probes.append(Probe(f"{path} {name}: given twice", "GET", repeated))
        probes += [
            Probe(f"{path}: unknown field", "GET", f"{path}?{qs({**query, 'evil': '1'})}"),
            Probe(f"{path}: no query", "GET", path),
            Probe(f"{path}: POST", "POST", path, {"a": 1}),
            Probe(
                f"{path}: 3,000 keys", "GET", f"{path}?" + "&".join(f"k{i}=1" for i in range(3000))
            ),
        ]
    board = "/api/pointer/hull/board/hull"
    many = ";".join(f"{i / 2600:.4f},{(i * 7 % 2500) / 2600:.4f}" for i in range(2500))
    probes += [
        Probe(
            "board: point 3 out of range (htmx)",
            "GET",
            f"{board}?{qs({'points': '0.1,0.2;0.5,0.6;1.5,0.2'})}",
            headers=HTMX,
            item=2,
        ),
        Probe(
            "board: point 3 has one number (htmx)",
            "GET",
            f"{board}?{qs({'points': '0.1,0.2;0.5,0.6;0.7'})}",
            headers=HTMX,
            item=2,
        ),
        Probe(
            "board: point 3 a unicode digit",
            "GET",
            f"{board}?{qs({'points': '0.1,0.2;0.5,0.6;²,0.3'})}",
            item=2,
        ),
        Probe("board: 2,500 points", "GET", f"{board}?{qs({'points': many})}", field="points"),
        Probe("board: unknown task", "GET", "/api/pointer/evil/board/x", expect=(404,)),
        Probe(
            "board: unknown task with state",
            "GET",
            f"/api/pointer/evil/board/x?{qs({'points': FIVE_TEXT})}",
            expect=(404,),
        ),
        Probe("board: key with a slash", "GET", "/api/pointer/hull/board/a%2Fb", expect=(404, 422)),
        Probe(
            "board: key too long", "GET", f"/api/pointer/hull/board/{'a' * 300}", expect=(404, 422)
        ),
        Probe(
            "board: key with unicode", "GET", "/api/pointer/hull/board/%C2%B2", expect=(404, 422)
        ),
        Probe("board: key empty", "GET", "/api/pointer/hull/board/", expect=(404,)),
        Probe(
            "routing: city 9 of 5",
            "GET",
            f"/api/routing/attention?{qs({'points': FIVE_TEXT, 'city': '9'})}",
            field="city",
        ),
        Probe(
            "routing: city 9 of 5 (htmx)",
            "GET",
            f"/api/routing/attention?{qs({'points': FIVE_TEXT, 'city': '9'})}",
            headers=HTMX,
            field="city",
        ),
    ]
    return probes


# ---- endpoints without fields, unknown paths, methods ----


def path_probes() -> list[Probe]:
    api_unknown = [
        "/api",
        "/api/",
        "/api/nothing",
        "/api/pointer",
        "/api/pointer/",
        "/api/pointer/evil",
        "/api/pointer/hull/models",
        "/api/pointer/hull/board",
        "/api/seq2seq",
        "/api/seq2seq/evil/figure",
        "/api/entmax/evil",
        "/api/routing",
        "/api/routing/evil",
        "/api/%00",
        "/api/..%2f..%2fetc%2fpasswd",
        "/api/" + "a" * 5000,
        "/api/²",
    ]
    other_unknown = [
        "/nothing",
        "/papers",
        "/papers/",
        "/papers/evil",
        "/papers/..%2fapp%2fmain.py",
        "/papers/%00",
        "/papers/" + "a" * 5000,
        "/static/nothing.css",
        "/static/../app/main.py",
        "/static/%2e%2e/app/main.py",
        "/static/css/",
        "/static/",
        "/static/vendor/plotly-0.0.0.min.js",
        "/.env",
        "/.git/config",
        "/metrics/../../etc/passwd",
    ]
    probes = [Probe(f"unknown {p[:40]}", "GET", p, expect=(404, 405)) for p in api_unknown]
    probes += [Probe(f"unknown {p[:40]}", "GET", p, expect=(404, 405)) for p in other_unknown]
    probes += [
        Probe(f"POST unknown {p[:40]}", "POST", p, {"a": 1}, expect=(404, 405))
        for p in api_unknown[:6]
    ]
    plain = ["/api/pointer/models", "/api/seq2seq/options", "/openapi.json", "/healthz", "/"]
    for path in plain:
        probes += [
            Probe(f"{path}: junk query", "GET", f"{path}?{qs({'x': HUGE_DIGITS, 'y': '²'})}"),
            Probe(f"{path}: DELETE", "DELETE", path, expect=(405,)),
            Probe(f"{path}: BREW", "BREW", path, expect=(405, 400)),
        ]
    probes.append(Probe("models: as htmx", "GET", "/api/pointer/models", headers=HTMX))
    return probes


# ---- pages with a figure's state in the address ----

PAGE_STATE: dict[str, dict[str, list[str]]] = {
    "/papers/pointer-networks": {
        "hull-points": ["points"],
        "hull-beam_width": ["number"],
        "hull-step": ["number"],
        "hull-decoder": ["choice"],
        "hull-samples": ["number"],
        "hull-alpha": ["number"],
        "tsp-points": ["points"],
        "tsp-seed": ["number"],
        "sort-values": ["values"],
        "sort-alpha": ["number"],
        "hull": ["points"],  # the old inputs key
        "hull-width": ["number"],
    },
    "/papers/sparse-seq2seq": {
        "translate.text": ["text"],
        "translate.beam_width": ["number"],
        "translate.beam": ["number"],
        "translate.inference_alpha": ["number"],
        "translate.alpha": ["number"],
        "translate.mode": ["choice"],
        "translate.compare": ["choice"],
        "translate.example": ["number"],
        "inflect.lemma": ["text"],
        "inflect.language": ["choice"],
        "inflect.features": ["text"],
        "inflect.beam_width": ["number"],
        "inflect.example": ["number"],
        "inflect.base_alpha": ["number"],
        "entmax-scores": ["values"],
        "entmax-alpha": ["number"],
        "entmax-text": ["text"],
    },
    "/papers/attention-routing": {
        "attn-points": ["points"],
        "attn-layer": ["number"],
        "attn-head": ["number"],
        "attn-city": ["number"],
        "rl-points": ["points"],
        "rl-samples": ["number"],
        "rl-seed": ["number"],
        "am-points": ["points"],
        "am-decoder": ["choice"],
    },
}
PAGE_VALUES = {
    "number": ["²", "٣", "１", HUGE_DIGITS, "1e400", "NaN", "-1", "abc", ""],
    "choice": ["evil", "", "²", OVERSIZED],
    "points": ["0.1,²;0.5,0.5;0.9,0.1", "NaN,NaN;1,1;0,1", HUGE_DIGITS, "0.1;0.2", "x" * 3000],
    "values": ["²,٣,１", HUGE_DIGITS, "NaN,inf", ",,,"],
    "text": ["", OVERSIZED, "\x00", "word " * 100],
}


def page_probes() -> list[Probe]:
    probes = []
    for page, keys in PAGE_STATE.items():
        for key, kinds in keys.items():
            for kind in kinds:
                for value in PAGE_VALUES[kind]:
                    shown = value if len(value) < 12 else f"{value[:8]}…({len(value)})"
                    probes.append(
                        Probe(f"{page} {key}={shown!r}", "GET", f"{page}?{qs({key: value})}")
                    )
    return probes


# ---- static files: ranges and conditions ----

STATIC_FILE = "/static/css/site.css"
BAD_RANGES = [
    "bytes=99999999-",
    "bytes=99999999-99999999",
    "bytes=5-1",
    "bytes=abc-def",
    "bytes=-",
    "bytes=",
    "bytes",
    "bytes=²-٣",
    "bytes=" + HUGE_DIGITS + "-",
    "bytes=0-1," * 200 + "0-1",
    "bytes=-0",
    "bytes=--1",
]
ODD_RANGES = ["items=0-1", "bytes=0-1,5-9", "bytes=0-0", "bytes=-10"]


def static_probes() -> list[Probe]:
    from app.assets import PLOTLY_URL, SCRIPTS

    probes = []
    for path in (STATIC_FILE, SCRIPTS["htmx"]):
        for value in BAD_RANGES:
            probes.append(
                Probe(f"{path} Range: {value[:30]}", "GET", path, headers={"Range": value})
            )
        for value in ODD_RANGES:
            probes.append(
                Probe(
                    f"{path} Range: {value}",
                    "GET",
                    path,
                    headers={"Range": value},
                    expect=(200, 206),
                )
            )
    probes += [
        Probe(
            f"{PLOTLY_URL} Range: {value[:30]}",
            "GET",
            PLOTLY_URL,
            headers={"Range": value, "Accept-Encoding": "identity"},
        )
        for value in BAD_RANGES[:4]
    ]
    probes += [
        Probe(
            "static If-None-Match junk", "GET", STATIC_FILE, headers={"If-None-Match": "\x7f" * 100}
        ),
        Probe(
            "static If-Modified-Since junk", "GET", STATIC_FILE, headers={"If-Modified-Since": "²"}
        ),
        Probe(
            "static If-Range junk",
            "GET",
            STATIC_FILE,
            headers={"If-Range": "x", "Range": "bytes=0-1"},
        ),
        Probe("static POST", "POST", STATIC_FILE, {"a": 1}, expect=(405,)),
    ]
    return probes


def corpus() -> list[Probe]:
    """Every probe, each name once."""
    probes = post_probes() + get_probes() + path_probes() + page_probes() + static_probes()
    names = Counter(p.name for p in probes)
    duplicated = [name for name, n in names.items() if n > 1]
    assert not duplicated, duplicated
    return probes


if __name__ == "__main__":
    probes = corpus()
    for family, n in sorted(Counter(p.family for p in probes).items()):
        print(f"{n:5d}  {family}")
    print(f"{len(probes):5d}  in all")
