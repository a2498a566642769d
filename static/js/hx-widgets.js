// Shared by the htmx widgets: an answer that is not 2xx (422 with a sentence, 503, …) or no
// answer at all shows why in the widget's [data-hx-error] line and marks the widget stale;
// the next good answer clears both (a line marked data-hx-error="server" is redrawn by every
// answer, and left as the answer drew it). A widget is the closest [data-hx-widget] around the
// element that sent the request (templates/base.html tells htmx to swap nothing on a 4xx and
// log no console error for it). When the widget's [data-hx-figure] still holds a figure,
// the line's data-stale note follows the sentence, else its data-empty note.
"use strict";

(() => {
  function parts(event) {
    const widget = event.detail.elt.closest("[data-hx-widget]");
    const line = widget?.querySelector("[data-hx-error]");
    return line ? { widget, line } : null;
  }

  function show(found, sentence) {
    const { widget, line } = found;
    const figure = widget.querySelector("[data-hx-figure]");
    const note = figure && !figure.children.length ? line.dataset.empty : line.dataset.stale;
    line.textContent = note ? `${sentence} ${note}` : sentence;
    line.hidden = false;
    widget.classList.add("is-stale");
  }

  function sentenceOf(xhr) {
    try {
      return JSON.parse(xhr.responseText).detail || `The server answered ${xhr.status}.`;
    } catch {
      return `The server answered ${xhr.status}; try again.`;
    }
  }

  document.addEventListener("htmx:afterRequest", (event) => {
    const found = parts(event);
    const status = event.detail.xhr?.status ?? 0;
    if (!found || status === 0) return; // aborted, or not sent (htmx:sendError below)
    if (status >= 400) {
      show(found, sentenceOf(event.detail.xhr));
      return;
    }
    found.widget.classList.remove("is-stale");
    if (found.line.dataset.hxError === "server") return; // each answer draws this line itself
    found.line.hidden = true;
    found.line.textContent = "";
  });
  document.addEventListener("htmx:sendError", (event) => {
    const found = parts(event);
    if (found) show(found, "The server could not be reached; try again.");
  });
  // A page render that did not run the state in its address draws a sentence with a button that
  // sends the widget's form, which holds that state, to the API (app/widgets, PageFigure). It
  // needs script, so script shows it (the scripts are deferred: the page is parsed by now).
  for (const button of document.querySelectorAll("[data-run-state]")) button.hidden = false;

  // A figure's take-away block (app/figure_export.py): "Copy link" copies the figure's address
  // (without the clipboard it is a plain link), the copy buttons a citation or a script. The
  // block is redrawn with every answer, so its buttons are shown again after each swap.
  function showCopyButtons() {
    // the server writes the citation's link as a path (it never trusts a Host header)
    for (const code of document.querySelectorAll("[data-take-away] [id$='-cite'] code")) {
      code.textContent = code.textContent.replace("\\url{/", `\\url{${location.origin}/`);
    }
    if (!navigator.clipboard) return;
    for (const button of document.querySelectorAll("[data-copy-from]")) button.hidden = false;
  }
  document.addEventListener("click", async (event) => {
    const control = event.target.closest("[data-copy-link], [data-copy-from]");
    if (!control || !navigator.clipboard) return;
    event.preventDefault();
    const text = control.matches("[data-copy-link]")
      ? new URL(control.getAttribute("href"), location.href).href
      : document.getElementById(control.dataset.copyFrom).textContent.trim();
    const label = control.textContent;
    try {
      await navigator.clipboard.writeText(text);
      control.textContent = "Copied";
    } catch {
      control.textContent = "Select and copy";
    }
    setTimeout(() => (control.textContent = label), 2000);
  });
  showCopyButtons();
  document.addEventListener("htmx:afterSettle", showCopyButtons);

  // Watch it learn (templates/partials/widgets/learning.html): the slider and the box set the
  // request's snapshot field (a training step; empty for the trained model). Capture runs
  // before the figure's own trigger on the control, so the request carries the new step.
  function syncSnapshot(event) {
    const block = event.target.closest?.("[data-learning]");
    if (!block || !event.target.matches("[data-learning-slider], [data-learning-on]")) return;
    const steps = JSON.parse(block.dataset.steps);
    const slider = block.querySelector("[data-learning-slider]");
    const on = block.querySelector("[data-learning-on]").checked;
    const step = steps[Number(slider.value)];
    slider.disabled = !on;
    slider.setAttribute("aria-valuetext", `step ${step}`);
    block.querySelector("[data-snapshot]").value = on ? step : "";
  }
  document.addEventListener("input", syncSnapshot, true);
  document.addEventListener("change", syncSnapshot, true);
})();
