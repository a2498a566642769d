"""Debian's Chromium as the browser tests and the page benchmarks launch it (Playwright drives
it; it never downloads one).

One setting here is about speed. Chromium 156 builds its address bar's suggestion popup (the
WebUI pages chrome://omnibox-popup.top-chrome/ and its AI-mode variant) in a renderer of its own
for every new browser context: about 1 core-second each, for an address bar a headless page
never shows, which was two thirds of what a test's fresh context and one page load cost here
(1.6 → 0.6 core-seconds for the library page). Chromium keeps only the last --disable-features
it is given, so the list repeats Playwright's own (playwright 1.65, chromiumSwitches.ts)
before adding the popup's three features (pyproject.toml pins that Playwright: a newer one may
change its list).
"""

from __future__ import annotations

from typing import Any

CHROMIUM = "/usr/bin/chromium"
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
]
OMNIBOX_POPUP_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup"]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES + OMNIBOX_POPUP_FEATURES),
]


def launch(playwright: Any) -> Any:
    """A headless Chromium for `playwright` (a sync_playwright() context)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
