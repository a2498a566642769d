// The α playground's script: only what HTML cannot do. htmx sends the form and swaps the
// server's figure in (templates/partials/widgets/entmax-playground.html); this file shows α
// and a dragged or typed score at once, turns a drag on a score bar into that score, and
// after each answer moves the server's cut-off line onto the score bars.
"use strict";

const ENTMAX_DRAG_QUANTUM = 0.05;

function initEntmaxPlayground(root) {
  const span = JSON.parse(root.querySelector("[data-entmax-config]").textContent).scoreSpan;
  const alphaInput = root.querySelector("[data-entmax-alpha]");
  const alphaValue = root.querySelector("[data-entmax-alpha-value]");
  const percent = (value) => 50 + (Math.max(-span, Math.min(span, value)) / span) * 50;
  const rows = () => [...root.querySelectorAll(".entmax-score")];

  function drawScore(row, value) {
    const fill = row.querySelector(".score-fill");
    const end = Number.isFinite(value) ? percent(value) : 50;
    fill.setAttribute("x", Math.min(50, end));
    fill.setAttribute("width", Math.abs(end - 50));
    row.classList.toggle("is-clipped", Math.abs(value) > span);
  }

  // The server's answer: the cut-off τ/(α−1) and which words it keeps.
  function drawSupport() {
    const stats = root.querySelector("#entmax-stats");
    const bars = root.querySelectorAll("#entmax-bars .entmax-bar");
    const raw = stats.dataset.scoreThreshold;
    const threshold = raw === "" ? NaN : Number(raw);
    const inRange = Number.isFinite(threshold) && Math.abs(threshold) <= span;
    rows().forEach((row, i) => {
      const cut = row.querySelector(".score-cut");
      cut.toggleAttribute("hidden", !inRange); // an SVG element has no .hidden
      if (inRange) for (const end of ["x1", "x2"]) cut.setAttribute(end, percent(threshold));
      row.classList.toggle("is-out", bars.length > i && bars[i].classList.contains("is-zero"));
    });
    alphaInput.setAttribute(
      "aria-valuetext",
      `α ${Number(stats.dataset.alpha).toFixed(2)}, support ${stats.dataset.supportSize} of ${bars.length}`,
    );
  }

  root.addEventListener("input", (event) => {
    if (event.target === alphaInput) alphaValue.textContent = alphaInput.valueAsNumber.toFixed(2);
    const row = event.target.closest(".entmax-score");
    if (row) drawScore(row, event.target.value === "" ? NaN : event.target.valueAsNumber);
  });
  root.addEventListener("htmx:afterSettle", drawSupport);

  function dragScore(event, track) {
    const box = track.getBoundingClientRect();
    const fraction = Math.max(0, Math.min(1, (event.clientX - box.left) / box.width));
    const steps = Math.round(((fraction * 2 - 1) * span) / ENTMAX_DRAG_QUANTUM);
    const input = track.closest(".entmax-score").querySelector(".score-input");
    input.value = String(Number((steps * ENTMAX_DRAG_QUANTUM).toFixed(2)));
    input.dispatchEvent(new Event("input", { bubbles: true })); // htmx sends it
  }

  root.addEventListener("pointerdown", (event) => {
    const track = event.target.closest(".score-track");
    if (!track || event.button !== 0) return;
    event.preventDefault();
    track.setPointerCapture(event.pointerId);
    track.classList.add("is-dragging");
    dragScore(event, track);
  });
  root.addEventListener("pointermove", (event) => {
    const track = event.target.closest(".score-track");
    if (track && track.hasPointerCapture(event.pointerId)) dragScore(event, track);
  });
  for (const type of ["pointerup", "pointercancel"]) {
    root.addEventListener(type, (event) => {
      event.target.closest(".score-track")?.classList.remove("is-dragging");
    });
  }

  // A reload may restore stale form values: the controls follow what the server drew.
  alphaInput.value = root.querySelector("#entmax-stats").dataset.alpha;
  alphaValue.textContent = alphaInput.valueAsNumber.toFixed(2);
  root.dataset.ready = "true";
}

// After htmx has processed the page (its DOMContentLoaded listener was added first).
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-entmax-playground]").forEach(initEntmaxPlayground);
});
