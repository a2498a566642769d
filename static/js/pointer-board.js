// Pointer-network boards: collect the reader's points (or values), ask the server, draw its
// answer. Every board on a page ([data-pointer-board]) runs independently. No geometry or
// scoring happens here: the server returns the order, the exact answer, the gap and every
// step's pointer distribution; this file only maps unit coordinates onto the SVG frame.
"use strict";

(() => {
  // The frame shared with app/pointer_views.py (SVG user units, y pointing up).
  const FRAME = 400;
  const PAD = 24;
  const POINT_R = 5;
  const HALO_MAX_R = 26; // probability 1; the halo's area grows with the probability
  const LINE_Y = 60; // sorting: the number line
  const SLOT_Y = 170; // sorting: the output slots
  const LONG_PRESS_MS = 550;
  const DRAG_SLOP = 4; // px of movement before a press becomes a drag
  const PLAY_MS = 700;
  const SVG_NS = "http://www.w3.org/2000/svg";

  function svg(tag, attrs = {}, parent = null) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }

  const round3 = (v) => Math.round(v * 1000) / 1000;
  const clamp01 = (v) => Math.min(1, Math.max(0, v));
  const haloRadius = (p) => POINT_R + (HALO_MAX_R - POINT_R) * Math.sqrt(p);
  const toX = (x) => PAD + x * (FRAME - 2 * PAD);
  const toY = (y) => FRAME - PAD - y * (FRAME - 2 * PAD);
  const fromX = (px) => (px - PAD) / (FRAME - 2 * PAD);
  const fromY = (py) => (FRAME - PAD - py) / (FRAME - 2 * PAD);
  const probabilityText = (p) => (p === 0 ? "0" : p >= 0.0005 ? p.toFixed(3) : "<0.001");

  // Where each input's number goes so that no two overlap: the rule and constants of
  // app/board_labels.py (the server's first drawing), step for step.
  const LABEL = { charWidth: 7.7, ascent: 10.2, descent: 2.6, margin: 0.5, clearance: 6 };
  const POINT_SPOTS = [
    [8, -8, "start"],
    [-8, -8, "end"],
    [8, 16, "start"],
    [-8, 16, "end"],
  ];
  const LINE_ROWS = [44, 30, 16];
  const SLOT_DIGIT_WIDTH = 6.3; // the output slots' 9 px numbers

  function textBox(x, baseline, anchor, text) {
    const width = LABEL.charWidth * text.length;
    const left = { start: x, middle: x - width / 2, end: x - width }[anchor];
    const m = LABEL.margin;
    return [left - m, baseline - LABEL.ascent - m, left + width + m, baseline + LABEL.descent + m];
  }

  const boxesOverlap = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];

  function boxNearPoint(box, x, y) {
    const dx = Math.min(Math.max(x, box[0]), box[2]) - x;
    const dy = Math.min(Math.max(y, box[1]), box[3]) - y;
    return dx * dx + dy * dy < LABEL.clearance * LABEL.clearance;
  }

  // the hull board's END mark (dot and word) in the top right corner
  const endMarkBoxes = () => {
    const [x, y] = [FRAME - 44, 44];
    return [[x - 6, y - 6, x + 6, y + 6], textBox(x, y + 4, "middle", "END")];
  };

  function placePointLabels(coords, reserved = []) {
    const placed = [...reserved];
    return coords.map(([x, y], i) => {
      const text = String(i + 1);
      const spot = POINT_SPOTS.find(([dx, dy, anchor]) => {
        const box = textBox(x + dx, y + dy, anchor, text);
        const inside = box[0] >= 0 && box[1] >= 0 && box[2] <= FRAME && box[3] <= FRAME;
        if (!inside || placed.some((other) => boxesOverlap(box, other))) return false;
        if (coords.some(([px, py]) => boxNearPoint(box, px, py))) return false;
        placed.push(box);
        return true;
      });
      const [dx, dy, anchor] = spot || POINT_SPOTS[0];
      return { dx, dy, anchor, crowded: !spot };
    });
  }

  function placeLineLabels(xs) {
    const placed = [];
    return xs.map((x, i) => {
      const text = String(i + 1);
      const row = LINE_ROWS.find((baseline) => {
        const box = textBox(x, baseline, "middle", text);
        if (placed.some((other) => boxesOverlap(box, other))) return false;
        placed.push(box);
        return true;
      });
      return { y: row ?? LINE_ROWS[0], crowded: row === undefined };
    });
  }

  function cssColor(element, name, fallback) {
    return getComputedStyle(element).getPropertyValue(name).trim() || fallback;
  }

  class Board {
    constructor(root) {
      this.root = root;
      this.config = JSON.parse(root.querySelector("[data-board-config]").textContent);
      this.task = this.config.task;
      this.isSort = this.task === "sort";
      this.key = this.config.key;
      this.example = structuredClone(this.config.example);
      this.inputs = structuredClone(this.config.inputs);
      this.options = {
        decoder: "greedy",
        beam_width: 8,
        samples: 64,
        alpha: this.config.alphas[0] ?? null,
      };
      this.showExact = true;
      this.step = 0;
      this.result = null;
      this.requestSeq = 0;
      this.inFlight = false;
      this.pending = false;
      this.hoverIndex = null;
      this.playTimer = null;

      const q = (selector) => root.querySelector(selector);
      this.el = {
        svg: q("[data-board-svg]"),
        resultSlot: q("[data-result]"),
        error: q("[data-error]"),
        heatmap: q("[data-heatmap]"),
        step: q("[data-step]"),
        stepLabel: q("[data-step-label]"),
        play: q("[data-play]"),
        randomN: q("[data-random-n]"),
        decoder: q("[data-decoder]"),
        beamWidth: q("[data-beam-width]"),
        beamWidthLabel: q("[data-beam-width-label]"),
        samples: q("[data-samples]"),
        samplesLabel: q("[data-samples-label]"),
        showExact: q("[data-show-exact]"),
        typed: q("[data-typed]"),
        variants: [...root.querySelectorAll("[data-variant]")],
      };
      this.readResult();
      const restored = this.restoreFromUrl();
      this.bindControls();
      this.bindBoard();
      this.syncControls();
      this.draw();
      if (restored) this.ask();
    }

    // ---- state <-> URL ----

    param(name) {
      return name ? `${this.key}-${name}` : this.key;
    }

    restoreFromUrl() {
      const params = new URLSearchParams(location.search);
      let restored = false;
      const encoded = params.get(this.param());
      if (encoded !== null) {
        const inputs = this.isSort
          ? encoded.split(",").filter(Boolean).map(Number)
          : encoded
              .split(";")
              .filter(Boolean)
              .map((pair) => pair.split(",").map(Number));
        const finite = inputs.flat().every(Number.isFinite);
        if (finite && inputs.length <= this.config.max_inputs) {
          this.inputs = inputs;
          restored = true;
        }
      }
      const decoder = params.get(this.param("decoder"));
      if (decoder) {
        const match = /^(greedy|beam|sample)(\d+)?$/.exec(decoder);
        if (match) {
          this.options.decoder = match[1];
          const count = match[2] ? Number(match[2]) : null;
          if (count && match[1] === "beam") {
            this.options.beam_width = Math.min(this.config.max_beam_width, Math.max(1, count));
          }
          if (count && match[1] === "sample") {
            this.options.samples = Math.min(this.config.max_samples, Math.max(1, count));
          }
          restored = true;
        }
      }
      const alpha = Number(params.get(this.param("alpha")));
      if (this.config.alphas.includes(alpha)) {
        this.options.alpha = alpha;
        restored = true;
      }
      const step = Number(params.get(this.param("step")));
      if (Number.isInteger(step) && step > 0) this.pendingStep = step - 1;
      return restored;
    }

    saveToUrl() {
      const params = new URLSearchParams(location.search);
      const encoded = this.isSort
        ? this.inputs.join(",")
        : this.inputs.map(([x, y]) => `${x},${y}`).join(";");
      params.set(this.param(), encoded);
      const counts = { beam: this.options.beam_width, sample: this.options.samples };
      params.set(this.param("decoder"), `${this.options.decoder}${counts[this.options.decoder] ?? ""}`);
      if (this.options.alpha !== null) params.set(this.param("alpha"), String(this.options.alpha));
      params.set(this.param("step"), String(this.step + 1));
      const query = params.toString().replaceAll("%2C", ",").replaceAll("%3B", ";");
      history.replaceState(history.state, "", `${location.pathname}?${query}${location.hash}`);
    }

    // ---- talking to the server ----

    body() {
      const body = { decoder: this.options.decoder, beam_width: this.options.beam_width };
      if (this.options.decoder === "sample") body.samples = this.options.samples; // seed 0
      if (this.options.alpha !== null) body.alpha = this.options.alpha;
      body[this.isSort ? "values" : "points"] = this.inputs;
      return body;
    }

    changed() {
      this.step = 0;
      this.saveToUrl();
      this.syncTyped();
      this.draw(); // the inputs at once; the answer follows when the server replies
      this.ask();
    }

    // One request at a time; changes made meanwhile (a drag) are sent when it returns.
    async ask() {
      if (this.inputs.length < this.config.min_inputs) {
        this.result = null;
        this.showError(
          `Add at least ${this.config.min_inputs} ${this.isSort ? "values" : "points"}.`,
        );
        this.draw();
        return;
      }
      if (this.inFlight) {
        this.pending = true;
        return;
      }
      this.inFlight = true;
      this.root.classList.add("is-busy");
      const seq = ++this.requestSeq;
      try {
        const response = await fetch(this.config.api, {
          method: "POST",
          headers: { "Content-Type": "application/json", "HX-Request": "true" },
          body: JSON.stringify(this.body()),
        });
        if (seq !== this.requestSeq) return;
        if (response.ok) {
          this.el.resultSlot.innerHTML = await response.text();
          this.readResult();
          this.showError(null);
          // the server's sentence about its first drawing no longer describes this one
          this.root.querySelector("[data-url-note]")?.remove();
        } else {
          const problem = await response.json().catch(() => ({}));
          this.result = null;
          this.showError(problem.detail || `The server answered ${response.status}.`);
        }
      } catch {
        this.showError("The server could not be reached; try again.");
      } finally {
        this.inFlight = false;
        this.root.classList.remove("is-busy");
        this.draw();
        if (this.pending) {
          this.pending = false;
          this.ask();
        }
      }
    }

    readResult() {
      const block = this.el.resultSlot.querySelector("[data-result-json]");
      this.result = block ? JSON.parse(block.textContent) : null;
      if (this.result && this.pendingStep !== undefined) {
        this.step = Math.min(this.pendingStep, this.result.steps.length - 1);
        this.pendingStep = undefined;
      }
      this.el.resultSlot.hidden = !this.result;
    }

    showError(message) {
      this.el.error.textContent = message || "";
      this.el.error.hidden = !message;
      if (message) this.el.resultSlot.hidden = true;
    }

    // ---- controls ----

    bindControls() {
      const el = this.el;
      this.root.querySelector("[data-random]").addEventListener("click", () => {
        const n = Math.round(Number(el.randomN.value) || 10);
        const count = Math.min(this.config.max_inputs, Math.max(this.config.min_inputs, n));
        el.randomN.value = count;
        this.inputs = Array.from({ length: count }, () =>
          this.isSort ? round3(Math.random()) : [round3(Math.random()), round3(Math.random())],
        );
        this.changed();
      });
      this.root.querySelector("[data-clear]").addEventListener("click", () => {
        this.inputs = [];
        this.changed();
      });
      this.root.querySelector("[data-example]").addEventListener("click", () => {
        this.inputs = structuredClone(this.example);
        this.changed();
      });
      el.decoder.addEventListener("change", () => {
        this.options.decoder = el.decoder.value;
        this.syncControls();
        this.changed();
      });
      el.beamWidth.addEventListener("change", () => {
        const width = Math.round(Number(el.beamWidth.value));
        if (!Number.isFinite(width)) return;
        this.options.beam_width = Math.min(this.config.max_beam_width, Math.max(1, width));
        el.beamWidth.value = this.options.beam_width;
        this.changed();
      });
      el.samples.addEventListener("change", () => {
        const count = Math.round(Number(el.samples.value));
        if (!Number.isFinite(count)) return;
        this.options.samples = Math.min(this.config.max_samples, Math.max(1, count));
        el.samples.value = this.options.samples;
        this.changed();
      });
      for (const radio of el.variants) {
        radio.addEventListener("change", () => {
          if (!radio.checked) return;
          this.options.alpha = Number(radio.value);
          this.changed();
        });
      }
      el.showExact.addEventListener("change", () => {
        this.showExact = el.showExact.checked;
        this.draw();
      });
      this.root.querySelector("[data-apply-typed]").addEventListener("click", () => {
        this.applyTyped();
      });
      el.step.addEventListener("input", () => {
        this.stopPlaying();
        this.step = Number(el.step.value);
        this.drawStep();
        this.saveToUrl();
      });
      el.play.addEventListener("click", () => {
        if (this.playTimer) this.stopPlaying();
        else this.play();
      });
    }

    syncControls() {
      const el = this.el;
      el.decoder.value = this.options.decoder;
      el.beamWidth.value = this.options.beam_width;
      el.beamWidthLabel.hidden = this.options.decoder !== "beam";
      el.samples.value = this.options.samples;
      el.samplesLabel.hidden = this.options.decoder !== "sample";
      for (const radio of el.variants) radio.checked = Number(radio.value) === this.options.alpha;
      this.syncTyped();
    }

    syncTyped() {
      this.el.typed.value = this.isSort
        ? this.inputs.join(", ")
        : this.inputs.map(([x, y]) => `${x}, ${y}`).join("\n");
    }

    applyTyped() {
      const text = this.el.typed.value.trim();
      if (this.isSort) {
        const values = text
          .split(/[\s,;]+/)
          .filter(Boolean)
          .map(Number);
        if (values.some((v) => !Number.isFinite(v))) {
          this.showError("Type numbers only, separated by commas or spaces.");
          return;
        }
        this.inputs = values;
      } else {
        const points = [];
        for (const [i, line] of text.split("\n").entries()) {
          if (!line.trim()) continue;
          const pair = line
            .split(/[\s,;]+/)
            .filter(Boolean)
            .map(Number);
          if (pair.length !== 2 || pair.some((v) => !Number.isFinite(v))) {
            this.showError(`Line ${i + 1} should hold two numbers, x and y.`);
            return;
          }
          points.push(pair);
        }
        this.inputs = points;
      }
      this.changed();
    }

    play() {
      if (!this.result) return;
      if (this.step >= this.result.steps.length - 1) this.step = 0;
      this.el.play.textContent = "Pause";
      this.el.play.setAttribute("aria-label", "Pause the decoding");
      this.drawStep();
      this.playTimer = setInterval(() => {
        if (!this.result || this.step >= this.result.steps.length - 1) {
          this.stopPlaying();
          return;
        }
        this.step += 1;
        this.drawStep();
      }, PLAY_MS);
    }

    stopPlaying() {
      if (!this.playTimer) return;
      clearInterval(this.playTimer);
      this.playTimer = null;
      this.el.play.textContent = "Play";
      this.el.play.setAttribute("aria-label", "Play the decoding");
      this.saveToUrl();
    }

    // ---- the board: add, drag, delete ----

    svgPoint(event) {
      const matrix = this.el.svg.getScreenCTM().inverse();
      const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix);
      return { x: point.x, y: point.y };
    }

    unitFromEvent(event) {
      const { x, y } = this.svgPoint(event);
      if (this.isSort) {
        const { low, high } = this.lineRange();
        return round3(low + clamp01(fromX(x)) * (high - low));
      }
      return [round3(clamp01(fromX(x))), round3(clamp01(fromY(y)))];
    }

    bindBoard() {
      const svgEl = this.el.svg;
      svgEl.addEventListener("pointerdown", (event) => this.onPointerDown(event));
      svgEl.addEventListener("pointermove", (event) => this.onPointerMove(event));
      svgEl.addEventListener("pointerup", (event) => this.onPointerUp(event));
      svgEl.addEventListener("pointercancel", () => this.endPress());
      svgEl.addEventListener("contextmenu", (event) => {
        const index = this.indexOf(event.target);
        if (index === null) return;
        event.preventDefault();
        // a phone fires contextmenu on a long press too: remove the point only once
        if (this.press && this.press.index === index) this.longPress();
        else this.remove(index);
      });
      svgEl.addEventListener("keydown", (event) => this.onKey(event));
      svgEl.addEventListener("pointerover", (event) => {
        const index = this.indexOf(event.target);
        if (index !== null) this.setHover(index);
      });
      svgEl.addEventListener("pointerout", (event) => {
        if (this.indexOf(event.target) !== null) this.setHover(null);
      });
    }

    indexOf(target) {
      const mark = target.closest?.("[data-index]");
      return mark ? Number(mark.dataset.index) : null;
    }

    onPointerDown(event) {
      if (event.button !== 0) return;
      const index = this.indexOf(event.target);
      this.press = { index, x: event.clientX, y: event.clientY, moved: false, removed: false };
      if (index === null) return;
      event.preventDefault();
      this.el.svg.setPointerCapture(event.pointerId);
      this.press.timer = setTimeout(() => this.longPress(), LONG_PRESS_MS);
    }

    longPress() {
      const press = this.press;
      if (!press || press.moved || press.removed) return;
      clearTimeout(press.timer);
      press.removed = true;
      this.remove(press.index);
    }

    onPointerMove(event) {
      const press = this.press;
      if (!press || press.index === null || press.removed) return;
      const distance = Math.hypot(event.clientX - press.x, event.clientY - press.y);
      if (!press.moved && distance < DRAG_SLOP) return;
      press.moved = true;
      clearTimeout(press.timer);
      this.inputs[press.index] = this.unitFromEvent(event);
      this.root.classList.add("is-stale");
      this.drawInputs();
      this.ask(); // throttled by ask(): one request in flight, the latest position follows
    }

    onPointerUp(event) {
      const press = this.press;
      this.endPress();
      if (!press) return;
      if (press.index === null) {
        if (event.target.closest(".pb-hit") && this.inputs.length < this.config.max_inputs) {
          this.inputs.push(this.unitFromEvent(event));
          this.changed();
        }
        return;
      }
      if (press.moved) this.changed();
      else if (!press.removed) this.focusMark(press.index);
    }

    endPress() {
      if (this.press) clearTimeout(this.press.timer);
      this.press = null;
      this.root.classList.remove("is-stale");
    }

    onKey(event) {
      const index = this.indexOf(event.target);
      if (index === null) return;
      if (event.key === "Delete" || event.key === "Backspace") {
        event.preventDefault();
        this.remove(index);
        return;
      }
      const step = event.shiftKey ? 0.05 : 0.01;
      const moves = {
        ArrowLeft: [-step, 0],
        ArrowRight: [step, 0],
        ArrowUp: [0, step],
        ArrowDown: [0, -step],
      };
      const move = moves[event.key];
      if (!move) return;
      event.preventDefault();
      if (this.isSort) {
        this.inputs[index] = round3(this.inputs[index] + move[0] + move[1]);
      } else {
        const [x, y] = this.inputs[index];
        this.inputs[index] = [round3(clamp01(x + move[0])), round3(clamp01(y + move[1]))];
      }
      this.changed();
      this.focusMark(index);
    }

    remove(index) {
      this.inputs.splice(index, 1);
      this.changed();
      this.focusMark(Math.min(index, this.inputs.length - 1));
    }

    focusMark(index) {
      if (index < 0) return;
      const mark = this.el.svg.querySelector(`[data-index="${index}"]`);
      if (mark) mark.focus();
    }

    // ---- drawing ----

    layer(name) {
      let layer = this.el.svg.querySelector(`[data-layer="${name}"]`);
      if (layer.tagName !== "g") {
        // the server renders the reference as a bare path; replace it with a group
        const group = svg("g", { "data-layer": name });
        layer.replaceWith(group);
        layer = group;
      }
      layer.replaceChildren();
      return layer;
    }

    lineRange() {
      const values = this.inputs.length ? this.inputs : [0, 1];
      return { low: Math.min(0, ...values), high: Math.max(1, ...values) };
    }

    lineX(value) {
      const { low, high } = this.lineRange();
      return PAD + ((value - low) / (high - low)) * (FRAME - 2 * PAD);
    }

    slotX(position) {
      const n = this.inputs.length;
      return n <= 1 ? FRAME / 2 : PAD + (position / (n - 1)) * (FRAME - 2 * PAD);
    }

    position(index) {
      return this.isSort
        ? [this.lineX(this.inputs[index]), LINE_Y]
        : [toX(this.inputs[index][0]), toY(this.inputs[index][1])];
    }

    draw() {
      const fresh = this.result && this.result.n === this.inputs.length;
      this.root.classList.toggle("has-result", Boolean(fresh));
      if (this.isSort) this.drawTicks();
      this.drawAnswers(fresh ? this.result : null);
      this.drawInputs();
      this.drawStep();
      this.drawHeatmap(fresh ? this.result : null);
    }

    drawTicks() {
      const layer = this.layer("ticks");
      const { low, high } = this.lineRange();
      for (let t = 0; t <= 4; t += 1) {
        const value = low + ((high - low) * t) / 4;
        const text = svg("text", { x: this.lineX(value), y: 92 }, layer);
        text.textContent = String(Math.round(value * 1000) / 1000);
      }
    }

    pathThrough(indices, closed) {
      if (!indices.length) return "";
      const coords = indices.map((i) => this.position(i).join(","));
      return `M${coords.join(" L")}${closed ? " Z" : ""}`;
    }

    drawAnswers(result) {
      this.progressPath = null;
      const reference = this.layer("reference");
      const model = this.layer("model");
      if (!result) return;
      if (this.isSort) {
        this.drawSortRows(result, reference, model);
        return;
      }
      if (this.showExact) {
        svg(
          "path",
          { class: "pb-reference", d: this.pathThrough(result.reference.order, true) },
          reference,
        );
      }
      const closed = this.task === "tsp" || result.valid;
      svg("path", { class: "pb-model is-whole", d: this.pathThrough(result.order, closed) }, model);
      this.progressPath = svg("path", { class: "pb-model pb-progress" }, model);
    }

    // Sorting: each value is joined to the output slot the model put it in; the exact
    // order's slots are drawn dashed beneath. Crossing lines are misplaced values.
    drawSortRows(result, reference, model) {
      const y0 = LINE_Y + 8;
      const y1 = SLOT_Y - 12;
      const label = svg("text", { x: PAD, y: SLOT_Y + 28, class: "pb-row-label" }, model);
      label.textContent = "model's output, left to right";
      if (this.showExact) {
        result.reference.order.forEach((index, slot) => {
          const x = this.lineX(this.inputs[index]);
          svg(
            "line",
            { class: "pb-reference", x1: x, y1: y0, x2: this.slotX(slot), y2: y1 },
            reference,
          );
        });
      }
      const sorted = result.reference.order.map((i) => this.inputs[i]);
      // Many values crowd the slots: the circles shrink to their spacing, and a slot's number
      // shows only where it clears the last one shown (every slot keeps it as a tooltip).
      const spacing = this.inputs.length > 1 ? this.slotX(1) - this.slotX(0) : FRAME;
      const radius = Math.max(2.5, Math.min(9, spacing / 2 - 0.5));
      let shownRight = -Infinity;
      result.order.forEach((index, slot) => {
        const x = this.lineX(this.inputs[index]);
        const wrong = this.inputs[index] !== sorted[slot];
        const link = svg(
          "line",
          {
            class: `pb-link${wrong ? " is-wrong" : ""}`,
            x1: x,
            y1: y0,
            x2: this.slotX(slot),
            y2: y1,
          },
          model,
        );
        link.dataset.slot = slot;
        const box = svg("g", { class: `pb-slot${wrong ? " is-wrong" : ""}` }, model);
        box.dataset.slot = slot;
        svg("circle", { cx: this.slotX(slot), cy: SLOT_Y, r: radius }, box);
        svg("title", {}, box).textContent = `output ${slot + 1}: input ${index + 1}`;
        const number = String(index + 1);
        const half = (SLOT_DIGIT_WIDTH * number.length) / 2 + 1;
        if (this.slotX(slot) - half < shownRight) return;
        shownRight = this.slotX(slot) + half;
        // a number wider than its shrunken circle goes under it
        const text =
          radius < 9
            ? svg("text", { x: this.slotX(slot), y: SLOT_Y + radius + 9, class: "is-below" }, box)
            : svg("text", { x: this.slotX(slot), y: SLOT_Y + 4 }, box);
        text.textContent = number;
      });
    }

    drawInputs() {
      // redrawing replaces the marks; keep keyboard focus on the same input
      const focused = this.el.svg.contains(document.activeElement)
        ? this.indexOf(document.activeElement)
        : null;
      const layer = this.layer("points");
      const coords = this.inputs.map((_, index) => this.position(index));
      const labels = this.isSort
        ? placeLineLabels(coords.map(([x]) => x))
        : placePointLabels(coords, this.task === "hull" ? endMarkBoxes() : []);
      this.inputs.forEach((input, index) => {
        const [x, y] = coords[index];
        const value = this.isSort ? String(input) : `(${input[0]}, ${input[1]})`;
        const mark = svg(
          "g",
          {
            class: "pb-point",
            tabindex: "0",
            role: "button",
            "aria-label": `${this.isSort ? "Value" : "Point"} ${index + 1}: ${value}. Arrow keys move it; Delete removes it.`,
          },
          layer,
        );
        mark.dataset.index = index;
        svg("circle", { class: "pb-grab", cx: x, cy: y, r: 14 }, mark);
        svg("circle", { cx: x, cy: y, r: POINT_R }, mark);
        const spot = labels[index];
        const text = svg(
          "text",
          this.isSort
            ? { x, y: spot.y }
            : { x, y, dx: spot.dx, dy: spot.dy, "text-anchor": spot.anchor },
          mark,
        );
        if (spot.crowded) text.classList.add("is-crowded");
        text.textContent = String(index + 1);
      });
      if (!this.isSort) {
        // the answer paths follow the points while they are dragged
        const whole = this.el.svg.querySelector(".pb-model.is-whole");
        if (whole && this.result && this.result.n === this.inputs.length) {
          whole.setAttribute(
            "d",
            this.pathThrough(this.result.order, this.task === "tsp" || this.result.valid),
          );
        }
      }
      if (focused !== null) this.focusMark(Math.min(focused, this.inputs.length - 1));
      this.markHover();
    }

    drawStep() {
      const halos = this.layer("halos");
      const result = this.result && this.result.n === this.inputs.length ? this.result : null;
      const el = this.el;
      el.play.disabled = !result;
      el.step.disabled = !result;
      if (!result) {
        el.stepLabel.textContent = "No decoding yet.";
        return;
      }
      const last = result.steps.length - 1;
      this.step = Math.min(this.step, last);
      el.step.max = last;
      el.step.value = this.step;
      const step = result.steps[this.step];
      const positions = step.distribution.length;
      step.distribution.forEach((p, index) => {
        if (index >= this.inputs.length) return;
        const [x, y] = this.position(index);
        const halo = svg(
          "circle",
          {
            class: `pb-halo${p === 0 ? " is-zero" : ""}`,
            cx: x,
            cy: y,
            r: p === 0 ? POINT_R + 4 : haloRadius(p),
          },
          halos,
        );
        halo.dataset.p = p;
      });
      if (this.task === "hull") {
        // the end position, drawn in the corner with its own halo
        const p = step.distribution[result.n];
        const end = svg(
          "g",
          { class: `pb-end${step.chosen === result.n ? " is-chosen" : ""}` },
          halos,
        );
        svg(
          "circle",
          {
            class: `pb-halo${p === 0 ? " is-zero" : ""}`,
            cx: FRAME - 44,
            cy: 44,
            r: p === 0 ? POINT_R + 4 : haloRadius(p),
          },
          end,
        );
        const text = svg("text", { x: FRAME - 44, y: 48 }, end);
        text.textContent = "END";
      }
      for (const mark of el.svg.querySelectorAll("[data-layer='points'] [data-index]")) {
        mark.classList.toggle("is-chosen", Number(mark.dataset.index) === step.chosen);
      }
      const chosenSoFar = result.steps
        .slice(0, this.step + 1)
        .map((s) => s.chosen)
        .filter((c) => c < result.n);
      if (this.progressPath)
        this.progressPath.setAttribute("d", this.pathThrough(chosenSoFar, false));
      for (const slot of el.svg.querySelectorAll("[data-slot]")) {
        slot.classList.toggle("is-done", Number(slot.dataset.slot) <= this.step);
      }
      const chosen = step.chosen === result.n ? "END" : String(step.chosen + 1);
      el.stepLabel.textContent =
        `Step ${this.step + 1} of ${last + 1}: chose ${chosen} ` +
        `(p = ${probabilityText(step.distribution[step.chosen])}; support ${step.support_size} of ${positions})`;
      for (const row of this.root.querySelectorAll("[data-step-row]")) {
        row.classList.toggle("is-current", Number(row.dataset.stepRow) === this.step);
      }
      this.highlightRow();
    }

    // ---- heatmap (plotly) and hover links ----

    drawHeatmap(result) {
      const target = this.el.heatmap;
      if (!window.Plotly) return;
      if (!result) {
        target.hidden = true;
        return;
      }
      target.hidden = false;
      const labels = result.steps[0].distribution.map((_, j) =>
        j === result.n ? "END" : String(j + 1),
      );
      // exact zeros become gaps, so a sparse pointer's zeros read as blank, not as "small"
      const z = result.steps.map((s) => s.distribution.map((p) => (p === 0 ? null : p)));
      const ink = cssColor(this.root, "--ink", "#1d1f23");
      const accent = cssColor(this.root, "--accent", "#1d4e89");
      const faint = cssColor(this.root, "--accent-soft", "#e4ecf6");
      const rows = result.steps.length;
      const data = [
        {
          type: "heatmap",
          z,
          x: labels,
          y: result.steps.map((_, i) => `step ${i + 1}`),
          zmin: 0,
          zmax: 1,
          // the lowest nonzero probability is still tinted, unlike a blank exact zero
          colorscale: [
            [0, faint],
            [1, accent],
          ],
          xgap: 1,
          ygap: 1,
          hovertemplate: "%{y}, position %{x}: p = %{z:.3f}<extra></extra>",
          colorbar: { thickness: 10, len: 0.9, tickfont: { size: 10 } },
        },
      ];
      const layout = {
        height: Math.min(460, 90 + rows * Math.max(10, Math.min(24, 320 / rows))),
        margin: { l: 56, r: 10, t: 28, b: 40 },
        paper_bgcolor: "rgba(0,0,0,0)",
        plot_bgcolor: "rgba(0,0,0,0)",
        font: { color: ink, size: 11 },
        title: {
          text: "Pointer probability per step (blank = exactly 0)",
          font: { size: 12 },
          x: 0,
        },
        xaxis: {
          title: { text: "input position" },
          type: "category",
          tickfont: { size: 10 },
          showgrid: false,
        },
        yaxis: { autorange: "reversed", type: "category", tickfont: { size: 10 }, showgrid: false },
        shapes: this.heatmapShapes(result),
      };
      Plotly.react(target, data, layout, { displayModeBar: false, responsive: true });
      if (!target.dataset.bound) {
        target.dataset.bound = "true";
        target.on("plotly_hover", (event) => {
          const column = event.points[0].pointNumber[1];
          this.setHover(column < this.inputs.length ? column : null);
        });
        target.on("plotly_unhover", () => this.setHover(null));
      }
    }

    heatmapShapes(result) {
      const positions = result.steps[0].distribution.length;
      const shapes = [
        {
          type: "rect",
          xref: "x",
          yref: "y",
          x0: -0.5,
          x1: positions - 0.5,
          y0: this.step - 0.5,
          y1: this.step + 0.5,
          line: { color: cssColor(this.root, "--focus", "#d9480f"), width: 2 },
        },
      ];
      if (this.hoverIndex !== null) {
        shapes.push({
          type: "rect",
          xref: "x",
          yref: "paper",
          x0: this.hoverIndex - 0.5,
          x1: this.hoverIndex + 0.5,
          y0: 0,
          y1: 1,
          line: { color: cssColor(this.root, "--ink-soft", "#4a4f57"), width: 1.5, dash: "dot" },
        });
      }
      return shapes;
    }

    highlightRow() {
      const target = this.el.heatmap;
      const result = this.result;
      if (!window.Plotly || !result || target.hidden || !target.data) return;
      Plotly.relayout(target, { shapes: this.heatmapShapes(result) });
    }

    setHover(index) {
      if (this.hoverIndex === index) return;
      this.hoverIndex = index;
      this.markHover();
      this.highlightRow();
    }

    markHover() {
      for (const mark of this.el.svg.querySelectorAll("[data-layer='points'] [data-index]")) {
        mark.classList.toggle("is-hovered", Number(mark.dataset.index) === this.hoverIndex);
      }
    }
  }

  for (const root of document.querySelectorAll("[data-pointer-board]")) {
    root.pointerBoard = new Board(root);
  }
})();
