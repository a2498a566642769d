"""Layout of the deep-dives as a reader meets them: page height, where the first live figure
starts, the longest paragraph and the longest main-text table (one not folded in <details>).

    .venv/bin/python -m app.serve --port 8790 &
    .venv/bin/python bench/page_metrics.py --base http://127.0.0.1:8790 [--width 1280] [--shots DIR]

One line of JSON per page. Not a test: the numbers depend on fonts and the browser.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.chromium import launch  # noqa: E402

PAGES = ("/papers/pointer-networks", "/papers/sparse-seq2seq")
MEASURE = """() => {
  const prose = document.querySelector('[data-prose]') || document.body;
  const live = document.getElementById('live-model');
  // a formula counts as one word, not as one per symbol
  const words = el => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('math').forEach(m => m.replaceWith(' x '));
    return (copy.textContent || '').split(/\\s+/).filter(Boolean).length;
  };
  const paragraphs = [...prose.querySelectorAll('p')].filter(p => !p.closest('figure, details'));
  const tables = [...prose.querySelectorAll('table')].filter(t => !t.closest('details'));
  const rows = t => t.querySelectorAll('tbody tr').length;
  const overflowing = [...prose.querySelectorAll('table')].filter(t => {
    const box = t.closest('.table-scroll') || t.parentElement;
    return t.scrollWidth > box.clientWidth + 1;
  }).length;
  return {
    height: document.documentElement.scrollHeight,
    first_live_figure: live ? Math.round(live.getBoundingClientRect().top + scrollY) : null,
    tables: prose.querySelectorAll('table').length,
    figures: prose.querySelectorAll('figure.widget').length,
    longest_paragraph_words: Math.max(0, ...paragraphs.map(words)),
    longest_main_table_rows: Math.max(0, ...tables.map(rows)),
    tables_wider_than_column: overflowing,
  };
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8790")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--shots", type=Path, help="save a full-page screenshot of each page here")
    parser.add_argument("--extra", nargs="*", default=[], help="more paths to measure")
    args = parser.parse_args()
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        for path in (*PAGES, *args.extra):
            page.goto(args.base + path, wait_until="load", timeout=120_000)
            metrics = page.evaluate(MEASURE)
            metrics["screens_to_first_live_figure"] = (
                round(metrics["first_live_figure"] / args.height, 1)
                if metrics["first_live_figure"] is not None
                else None
            )
            print(json.dumps({"page": path, "width": args.width, **metrics}))
            if args.shots:
                args.shots.mkdir(parents=True, exist_ok=True)
                name = path.strip("/").replace("/", "_") + f"-{args.width}.png"
                page.screenshot(path=str(args.shots / name), full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
