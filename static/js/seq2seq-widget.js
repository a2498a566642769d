// The sparse seq2seq widgets' script: only what HTML cannot do. htmx sends the form and swaps
// the server's figure in (templates/partials/widgets/seq2seq-*.html); the server draws every
// figure, the readout and the URL. This file names the trained α for screen readers while the
// slider moves, and says when the widget is ready.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // After htmx has processed the page (its DOMContentLoaded listener was added first).
  for (const root of document.querySelectorAll("[data-s2s]")) {
    const slider = root.querySelector("[data-s2s-alpha-slider]");
    slider.addEventListener("input", () => {
      slider.setAttribute("aria-valuetext", `α = ${Number(slider.value)}`);
    });
    root.dataset.s2sReady = "true";
  }
});
