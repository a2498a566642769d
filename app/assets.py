"""Scripts a page may load, by key; a page loads only those its widgets declare.

htmx is vendored in static/vendor with its version in the file name; plotly.js is served
straight from the installed `plotly` package, so the repository never carries a copy.
"""

from __future__ import annotations

from pathlib import Path

import plotly
import plotly.offline

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PLOTLY_VERSION = plotly.offline.get_plotlyjs_version()
PLOTLY_URL = f"/static/vendor/plotly-{PLOTLY_VERSION}.min.js"


def _vendored(pattern: str) -> str:
    matches = sorted((STATIC_DIR / "vendor").glob(pattern))
    if len(matches) != 1:
        raise RuntimeError(f"expected one static/vendor/{pattern}, found {len(matches)}")
    return f"/static/vendor/{matches[0].name}"


# Order matters: extensions after htmx, widget scripts after the libraries they use.
SCRIPTS: dict[str, str] = {
    "plotly": PLOTLY_URL,
    "htmx": _vendored("htmx-*.min.js"),
    "json-enc": _vendored("json-enc-*.js"),
}


def script_urls(needs: set[str]) -> list[str]:
    """Known keys in their fixed order, then widget scripts (paths under /static/) sorted."""
    if "json-enc" in needs:
        needs = needs | {"htmx"}
    known = [url for key, url in SCRIPTS.items() if key in needs]
    extra = sorted(f"/static/{path}" for path in needs - SCRIPTS.keys())
    return known + extra
