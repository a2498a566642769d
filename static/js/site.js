// Progressive enhancements; every page works without them.
"use strict";

// Highlight the contents entry of the section being read.
function trackTableOfContents() {
  const toc = document.querySelector("[data-toc]");
  const prose = document.querySelector("[data-prose]");
  if (!toc || !prose) return;

  if (window.matchMedia("(max-width: 60rem)").matches) toc.removeAttribute("open");

  const links = new Map();
  for (const link of toc.querySelectorAll("a[href^='#']")) {
    links.set(decodeURIComponent(link.hash.slice(1)), link);
  }
  const headings = [...prose.querySelectorAll("h2[id], h3[id]")].filter((h) => links.has(h.id));

  function setCurrent(id) {
    for (const [key, link] of links) {
      if (key === id) link.setAttribute("aria-current", "location");
      else link.removeAttribute("aria-current");
    }
    keepInView(links.get(id));
  }

  // The sidebar scrolls on its own when the contents are taller than the window: bring the
  // current entry into its visible part without moving the page.
  function keepInView(link) {
    if (!link || toc.scrollHeight <= toc.clientHeight) return;
    const box = toc.getBoundingClientRect();
    const entry = link.getBoundingClientRect();
    const margin = 2 * entry.height;
    if (entry.top < box.top + margin) toc.scrollTop -= box.top + margin - entry.top;
    else if (entry.bottom > box.bottom - margin) toc.scrollTop += entry.bottom - box.bottom + margin;
  }

  // After a jump from the contents, its target stays current while it is on screen,
  // even when the page is too short to bring it up to the reading line.
  let pinned = null;

  function update() {
    if (pinned) {
      const top = pinned.getBoundingClientRect().top;
      if (top >= -2 && top < window.innerHeight) {
        setCurrent(pinned.id);
        return;
      }
      pinned = null;
    }
    // The current section is the last heading above the reading line.
    let current = headings[0];
    for (const heading of headings) {
      if (heading.getBoundingClientRect().top <= window.innerHeight * 0.25) current = heading;
    }
    if (current) setCurrent(current.id);
  }

  // Every scroll (a fast one may carry no heading across the reading line, and a jump to
  // a #fragment scrolls without any), measured once per frame.
  let queued = false;
  function schedule() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      update();
    });
  }
  window.addEventListener("scroll", schedule, { passive: true });
  window.addEventListener("resize", schedule);
  window.addEventListener("hashchange", () => {
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && links.has(target.id)) pinned = target;
    schedule();
  });
  // A wheel, a key or a touch is the reader scrolling on: the jump target lets go.
  for (const type of ["wheel", "touchmove", "keydown"]) {
    window.addEventListener(type, () => (pinned = null), { passive: true });
  }
  schedule();

  // Moving focus along with the scroll keeps keyboard users where they jumped to.
  toc.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#']");
    if (!link) return;
    const target = document.getElementById(decodeURIComponent(link.hash.slice(1)));
    if (!target) return;
    pinned = target;
    setCurrent(target.id);
    target.setAttribute("tabindex", "-1");
    target.focus({ preventScroll: true });
  });
}

// Copy buttons for BibTeX entries; shown only when the clipboard API is there.
function enableCopyButtons() {
  if (!navigator.clipboard) return;
  for (const button of document.querySelectorAll("[data-copy-target]")) {
    const source = document.getElementById(button.dataset.copyTarget);
    if (!source) continue;
    const label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        button.textContent = "Copied";
      } catch {
        button.textContent = "Select and copy";
      }
      setTimeout(() => (button.textContent = label), 2000);
    });
  }
}

// Run a layout measurement now and once per frame while the window is resized.
function measureNowAndOnResize(measure) {
  measure();
  let pending = null;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(measure);
  });
}

// MathML cannot break lines; an inline formula wider than its column scrolls on its own, and
// the keyboard can reach it (focus, then the arrow keys) like the wide tables.
function containWideFormulas() {
  const formulas = document.querySelectorAll(".prose .math.inline");
  if (!formulas.length) return;
  function measure() {
    for (const formula of formulas) {
      formula.classList.remove("is-wide");
      formula.removeAttribute("tabindex");
      const column = formula.closest("p, li, td, th, blockquote") || formula.parentElement;
      if (formula.getBoundingClientRect().width > column.clientWidth) {
        formula.classList.add("is-wide");
        formula.setAttribute("tabindex", "0");
      }
    }
  }
  measureNowAndOnResize(measure);
}

// A table or display formula wider than the column scrolls sideways; say so under it, and
// let the keyboard reach it so the arrow keys can scroll it.
function markSidewaysScrolling() {
  const boxes = document.querySelectorAll(".prose .table-scroll, .prose .math.block");
  if (!boxes.length) return;
  const hints = new Map();
  for (const box of boxes) {
    const hint = document.createElement("p");
    hint.className = "scroll-hint";
    hint.setAttribute("aria-hidden", "true");
    hint.textContent = box.matches(".math.block")
      ? "The formula continues to the right: scroll it sideways →"
      : "More columns to the right: scroll the table sideways →";
    box.after(hint);
    hints.set(box, hint);
  }
  function measure() {
    for (const [box, hint] of hints) {
      const wide = box.scrollWidth > box.clientWidth + 1;
      hint.hidden = !wide;
      box.classList.toggle("is-scrollable", wide);
      if (wide && !box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
      if (!wide && box.matches(".math.block")) box.removeAttribute("tabindex");
    }
  }
  measureNowAndOnResize(measure);
}

trackTableOfContents();
containWideFormulas();
markSidewaysScrolling();
enableCopyButtons();
