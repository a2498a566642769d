"""Scripts and stylesheets a page may load; a page loads only those its widgets declare.

A widget's `needs` holds library keys (`plotly`, `htmx`) and paths under static/
(`js/pointer-board.js`, `css/pointer.css`).

htmx is vendored in static/vendor with its version in the file name; plotly.js is served
straight from the installed `plotly` package, so the repository never carries a copy.
"""

from __future__ import annotations

from dataclasses import dataclass
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


# Order matters: widget scripts after the libraries they use.
SCRIPTS: dict[str, str] = {
    "plotly": PLOTLY_URL,
    "htmx": _vendored("htmx-*.min.js"),
}


@dataclass(frozen=True)
class PageAssets:
    stylesheets: list[str]
    scripts: list[str]


def page_assets(needs: set[str]) -> PageAssets:
    """Library scripts in their fixed order, then the widgets' own files, sorted."""
    libraries = [url for key, url in SCRIPTS.items() if key in needs]
    files = sorted(f"/static/{path}" for path in needs - SCRIPTS.keys())
    return PageAssets(
        stylesheets=[url for url in files if url.endswith(".css")],
        scripts=libraries + [url for url in files if not url.endswith(".css")],
    )
