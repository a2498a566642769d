// The sparse seq2seq widgets (inflection and translation): collect the input, keep it in the URL,
// ask the server for the figure and swap it in. The server renders every figure (the same
// fragment as the first render); nothing is computed here.
"use strict";

(() => {
  const DEBOUNCE_MS = 200;

  function formatAlpha(alpha) {
    return String(Number(alpha.toFixed(2)));
  }

  function alphaName(alpha) {
    const names = { 1: "softmax", 1.5: "1.5-entmax", 2: "sparsemax" };
    return names[alpha] || `${formatAlpha(alpha)}-entmax`;
  }

  class Seq2SeqWidget {
    constructor(root) {
      this.root = root;
      this.task = root.dataset.task;
      this.endpoint = root.dataset.endpoint;
      this.key = root.dataset.stateKey;
      this.options = JSON.parse(root.querySelector("[data-s2s-options]").textContent);
      this.compareAlphas = JSON.parse(root.querySelector("[data-s2s-compare-alphas]").textContent);
      const labels = root.querySelector("[data-s2s-labels]");
      this.labels = labels ? JSON.parse(labels.textContent) : { languages: {}, features: {} };
      this.form = root.querySelector("[data-s2s-form]");
      this.single = root.querySelector("[data-s2s-single]");
      this.compare = root.querySelector("[data-s2s-compare]");
      this.status = root.querySelector("[data-s2s-status]");
      this.readout = root.querySelector("[data-s2s-readout]");
      this.slider = root.querySelector("[data-s2s-alpha-slider]");
      this.stops = this.options.models.map((model) => model.alpha);
      this.generation = 0;
      this.timer = null;
      this.controller = null;

      this.form.addEventListener("submit", (event) => event.preventDefault());
      this.form.addEventListener("input", (event) => this.changed(event));
      this.form.addEventListener("change", (event) => this.changed(event));
      for (const button of root.querySelectorAll(".s2s-example")) {
        button.addEventListener("click", () => this.useExample(button.dataset));
      }
      const restored = this.restore();
      // The server drew the default example; after a restore from the URL it is not the
      // reader's input, so an error must not leave it standing as if it were.
      this.figureIsReaders = !restored;
      this.showMode();
      this.showReadout();
      if (restored) this.update();
      root.dataset.s2sReady = "true";
    }

    field(name) {
      return this.form.elements.namedItem(name);
    }

    changed(event) {
      const name = event.target.name;
      if (name === "language") this.fillFeatures();
      if (name === "mode") this.showMode();
      this.showReadout();
      // A select or a slider fires both "input" and "change"; the debounce makes them one request.
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.update(), DEBOUNCE_MS);
    }

    fillFeatures(wanted) {
      const select = this.field("features");
      const cells = this.options.features[this.field("language").value] || [];
      const keep = wanted || select.value;
      const label = (cell) => (this.labels.features[cell] ? `${this.labels.features[cell]} · ${cell}` : cell);
      select.replaceChildren(...cells.map((cell) => new Option(label(cell), cell)));
      select.value = cells.includes(keep) ? keep : cells[0] || "";
    }

    useExample(data) {
      if (this.task === "inflection") {
        this.field("lemma").value = data.lemma;
        this.field("language").value = data.language;
        this.fillFeatures(data.features);
      } else {
        this.field("text").value = data.text;
      }
      this.update();
    }

    mode() {
      return this.form.querySelector("input[name=mode]:checked").value;
    }

    showMode() {
      const mode = this.mode();
      for (const panel of this.root.querySelectorAll("[data-s2s-panel]")) {
        panel.hidden = panel.dataset.s2sPanel !== mode;
      }
    }

    trainedAlpha() {
      return this.stops[Number(this.slider.value)];
    }

    showReadout() {
      const alpha = this.trainedAlpha();
      this.slider.setAttribute("aria-valuetext", `α = ${formatAlpha(alpha)}`);
      if (this.mode() === "trained") {
        this.readout.textContent = `α = ${formatAlpha(alpha)} (${alphaName(alpha)}): the model trained with it`;
      } else {
        const inference = Number(this.field("inference_alpha").value);
        const base = Number(this.field("base_alpha").value);
        this.readout.textContent =
          `inference-time α = ${formatAlpha(inference)}, applied to the model trained with α = ${formatAlpha(base)}`;
      }
    }

    // --- state <-> URL --------------------------------------------------------------------

    inputs() {
      if (this.task === "inflection") {
        return {
          lemma: this.field("lemma").value.trim(),
          language: this.field("language").value,
          features: this.field("features").value,
        };
      }
      return { text: this.field("text").value };
    }

    state() {
      const state = { ...this.inputs(), beam: this.field("beam_width").value, mode: this.mode() };
      state.alpha = formatAlpha(this.trainedAlpha());
      if (state.mode === "inference") {
        state.ia = this.field("inference_alpha").value;
        state.base = this.field("base_alpha").value;
      }
      if (this.field("compare").checked) state.compare = "1";
      return state;
    }

    writeUrl(state) {
      const params = new URLSearchParams(window.location.search);
      for (const name of [...params.keys()]) {
        if (name.startsWith(`${this.key}.`)) params.delete(name);
      }
      for (const [name, value] of Object.entries(state)) params.set(`${this.key}.${name}`, value);
      const query = params.toString();
      history.replaceState(history.state, "", `${window.location.pathname}${query ? `?${query}` : ""}${window.location.hash}`);
    }

    restore() {
      const params = new URLSearchParams(window.location.search);
      const get = (name) => params.get(`${this.key}.${name}`);
      if (![...params.keys()].some((name) => name.startsWith(`${this.key}.`))) return false;
      if (this.task === "inflection") {
        if (get("lemma") !== null) this.field("lemma").value = get("lemma");
        if (this.options.languages.includes(get("language"))) this.field("language").value = get("language");
        this.fillFeatures(get("features"));
      } else if (get("text") !== null) {
        this.field("text").value = get("text");
      }
      if (get("beam") !== null) this.field("beam_width").value = get("beam");
      const index = this.stops.findIndex((alpha) => formatAlpha(alpha) === get("alpha"));
      if (index >= 0) this.slider.value = String(index);
      if (get("mode") === "inference") {
        this.form.querySelector("input[name=mode][value=inference]").checked = true;
        if (get("ia") !== null) this.field("inference_alpha").value = get("ia");
        if (get("base") !== null) this.field("base_alpha").value = get("base");
      }
      this.field("compare").checked = get("compare") === "1";
      return true;
    }

    // --- requests ---------------------------------------------------------------------------

    body(overrides) {
      const body = { ...this.inputs(), ...overrides };
      const beam = this.field("beam_width").value;
      if (beam !== "") body.beam_width = Number(beam);
      return body;
    }

    requests() {
      const inference = this.mode() === "inference";
      const base = Number(this.field("base_alpha").value);
      if (this.field("compare").checked) {
        return this.compareAlphas.map((alpha) => ({
          title: inference
            ? `inference-time α = ${formatAlpha(alpha)} (trained with ${formatAlpha(base)})`
            : `α = ${formatAlpha(alpha)} (${alphaName(alpha)})`,
          body: inference ? this.body({ alpha: base, inference_alpha: alpha }) : this.body({ alpha }),
        }));
      }
      if (inference) {
        return [{ body: this.body({ alpha: base, inference_alpha: Number(this.field("inference_alpha").value) }) }];
      }
      return [{ body: this.body({ alpha: this.trainedAlpha() }) }];
    }

    async fetchFragment(body, compact, signal) {
      const response = await fetch(`${this.endpoint}${compact ? "?compact=1" : ""}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "HX-Request": "true" },
        body: JSON.stringify(body),
        signal,
      });
      const text = await response.text();
      if (response.ok) return text;
      let detail = `The server answered ${response.status}.`;
      try {
        detail = JSON.parse(text).detail || detail;
      } catch (error) {
        // not JSON: keep the status sentence
      }
      throw new Error(detail);
    }

    async update() {
      clearTimeout(this.timer);
      const generation = ++this.generation;
      if (this.controller) this.controller.abort();
      this.controller = new AbortController();
      const signal = this.controller.signal;
      this.writeUrl(this.state());
      const requests = this.requests();
      const comparing = this.field("compare").checked;
      this.root.dataset.s2sBusy = "true";
      try {
        if (comparing) {
          const columns = await this.compareColumns(requests, signal);
          if (generation !== this.generation) return;
          this.compare.replaceChildren(...columns);
        } else {
          const fragment = await this.fetchFragment(requests[0].body, false, signal);
          if (generation !== this.generation) return;
          this.single.innerHTML = fragment;
        }
        this.single.hidden = comparing;
        this.compare.hidden = !comparing;
        this.figureIsReaders = true;
        this.status.hidden = true;
        this.status.textContent = "";
        this.root.classList.remove("s2s-stale");
      } catch (error) {
        if (error.name === "AbortError" || generation !== this.generation) return;
        if (this.figureIsReaders) {
          this.status.textContent = `${error.message} The dimmed figure below is for the last input that worked.`;
          this.root.classList.add("s2s-stale");
        } else {
          this.status.textContent = `${error.message} Nothing is drawn until the input is fixed.`;
          this.single.hidden = true;
          this.compare.hidden = true;
        }
        this.status.hidden = false;
      } finally {
        if (generation === this.generation) delete this.root.dataset.s2sBusy;
      }
    }

    // One column per α; a column whose model cannot answer (say, not trained yet) says why,
    // the others still draw. If no column can answer, the caller shows the first reason.
    async compareColumns(requests, signal) {
      const settled = await Promise.allSettled(
        requests.map((request) => this.fetchFragment(request.body, true, signal)),
      );
      const failures = settled.filter((outcome) => outcome.status === "rejected");
      const aborted = failures.find((outcome) => outcome.reason.name === "AbortError");
      if (aborted) throw aborted.reason;
      if (failures.length === settled.length) throw failures[0].reason;
      return settled.map((outcome, i) => {
        const column = document.createElement("section");
        column.className = "s2s-compare-column";
        const title = document.createElement("p");
        title.className = "s2s-compare-title";
        title.textContent = requests[i].title;
        const body = document.createElement("div");
        if (outcome.status === "fulfilled") {
          body.innerHTML = outcome.value;
        } else {
          body.className = "s2s-column-error";
          body.textContent = outcome.reason.message;
        }
        column.append(title, body);
        return column;
      });
    }
  }

  function start() {
    for (const root of document.querySelectorAll("[data-s2s]")) new Seq2SeqWidget(root);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
