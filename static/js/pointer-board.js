// Pointer boards: only what HTML cannot do. The server draws every figure (app/pointer/board.py)
// and htmx makes the round trips: each board's <form hx-get> sends the board's state (its
// fields are the page address's keys; the request leaves out the board's key) and swaps in the
// answer. This file turns clicks, drags
// and arrow keys into the form's inputs box and asks htmx to send it, plays the decoder steps,
// and links the server's heatmap columns and the board's points on hover.
//
// The browser validates nothing (the form is "novalidate"): the server refuses an input with a
// sentence, which static/js/hx-widgets.js writes in the board's error line and this file moves
// beside the control that asked. A refused input never lingers: inputs the script wrote (a
// click, a drag, Random) go back to the board as drawn; inputs the reader typed stay for them
// to fix, but the next request another control asks for starts from the board as drawn; and a
// box the chosen decoder does not read is not sent while it holds a value the server refuses.
// So one refusal never makes the next good request fail.
"use strict";

(() => {
  const LONG_PRESS_MS = 550;
  const DRAG_SLOP = 4; // px of movement before a press becomes a drag
  const TAP_SLOP = 10; // px a press on the empty board may move and still add a point
  const PLAY_MS = 700;
  const THROTTLE_MS = { "board-drag": 40, "board-step": 60 }; // one request per window at most
  const round3 = (v) => Math.round(v * 1000) / 1000;
  const clamp01 = (v) => Math.min(1, Math.max(0, v));

  class Board {
    constructor(root) {
      this.root = root;
      this.config = JSON.parse(root.querySelector("[data-board-config]").textContent);
      this.isSort = this.config.task === "sort";
      const q = (selector) => root.querySelector(selector);
      this.form = q("[data-board-form]");
      this.canvas = q("[data-board-canvas]");
      this.typed = q("[data-typed]");
      this.slider = q("[data-step]");
      this.play = q("[data-play]");
      this.steps = q(".pb-steps"); // the error line's own place is just above
      this.turnBox = q("[data-turn]"); // your turn (hull and TSP): the reader's picks
      this.mineField = q("[data-mine]");
      this.accepted = this.typed.value; // the inputs of the answer on the board
      this.refused = false; // the last answer was refused: the board shows an older state
      this.cause = null; // the control that asked for the next answer
      q("[data-run-shared]")?.removeAttribute("hidden");
      this.hover = null;
      this.throttles = { "board-drag": {}, "board-step": {} };
      this.bind();
      this.answered();
    }

    get svg() {
      return this.canvas.querySelector("[data-board-svg]");
    }

    // ---- the inputs box is the board's state; htmx sends it ----

    inputs(text = this.typed.value) {
      if (this.isSort) return text.split(/[\s,;]+/).filter(Boolean).map(Number);
      return text
        .split(/[;\n]/)
        .map((line) => line.split(/[\s,]+/).filter(Boolean).map(Number))
        .filter((pair) => pair.length);
    }

    // the inputs an edit on the board starts from: the board as drawn after a refusal
    boardInputs() {
      return this.inputs(this.refused ? this.accepted : this.typed.value);
    }

    send(inputs, event = "board-change", cause = this.canvas) {
      this.cause = cause;
      if (this.mineField) this.mineField.value = ""; // new inputs: the picks no longer apply
      this.typed.value = this.isSort
        ? inputs.join(", ")
        : inputs.map(([x, y]) => `${x}, ${y}\n`).join("");
      this.slider.value = 1; // new inputs: start from the first step
      this.stepChosen = true;
      this.stopPlaying();
      if (event === "board-drag") return this.throttled(event);
      this.throttles["board-drag"].again = false; // this answer is the drag's last word
      htmx.trigger(this.form, event);
    }

    // Send `event` now or, when one went out less than THROTTLE_MS ago, once more at the end of
    // the window: the request reads the form as it leaves, so the last state is always answered.
    // (htmx's own throttle modifier is shared by all of a form's triggers and drops the last
    // event of a window: a drag's release or the slider's final step would go unanswered.)
    throttled(event) {
      const slot = this.throttles[event];
      if (slot.timer) {
        slot.again = true;
        return;
      }
      htmx.trigger(this.form, event);
      slot.timer = setTimeout(() => {
        slot.timer = null;
        if (slot.again) {
          slot.again = false;
          this.throttled(event);
        }
      }, THROTTLE_MS[event]);
    }

    // A box the decoder does not read (hidden with its label) is left out while it holds a
    // value outside its bounds (the server's limits): the server would refuse it.
    unread(data) {
      for (const field of this.form.querySelectorAll("[data-beam-width], [data-samples]")) {
        if (!field.validity.valid && !field.closest("label").checkVisibility()) data.delete(field.name);
      }
    }

    // whether the request `cause` asked for sends inputs the reader typed
    typedBy(cause) {
      return cause === this.typed || cause?.type === "submit";
    }

    // The form's fields are the page address's keys, the board's request fields under its key
    // ("hull-points"); the board's route takes the request's own names ("points").
    unprefixed(data) {
      const prefix = `${this.config.key}-`;
      const fields = [...data.entries()];
      for (const [name] of fields) data.delete(name);
      for (const [name, value] of fields) data.append(name.startsWith(prefix) ? name.slice(prefix.length) : name, value);
    }

    // An answer came (2xx) or was refused: a refusal's sentence goes beside the control that
    // asked, and inputs the script wrote go back to those of the board as drawn.
    settled(status, asked) {
      const line = this.root.querySelector("[data-error]");
      if (status >= 200 && status < 300) {
        this.accepted = asked.text;
        this.refused = false;
        this.steps.before(line);
        return;
      }
      this.refused = true;
      this.refusedText = asked.text;
      this.place(line, asked.cause);
      if (this.typedBy(asked.cause)) this.typed.closest("details").open = true;
      else if (this.typed.value === asked.text) this.typed.value = this.accepted;
    }

    place(line, cause) {
      const row = cause?.closest?.(".pb-row, .pb-typed, .pb-url-note");
      const anchor = row || (cause?.type === "submit" ? cause : null);
      if (anchor && this.form.contains(anchor)) anchor.after(line);
      else this.steps.before(line);
    }

    // A sentence of the script's own, beside `cause`: the board is unchanged, so not stale.
    say(cause, sentence) {
      const line = this.root.querySelector("[data-error]");
      this.place(line, cause);
      line.textContent = sentence;
      line.hidden = false;
    }

    // The answer is in: the slider and the play button follow the new figure.
    answered() {
      const svg = this.svg;
      const steps = Number(svg.dataset.drawnSteps);
      this.slider.max = Math.max(1, steps);
      // a step chosen after this answer's request left stays on the slider: the request that
      // carries it is queued or throttled, and reads the slider when it leaves
      if (!this.stepChosen) this.slider.value = Number(svg.dataset.drawnStep) + 1;
      this.slider.disabled = this.play.disabled = steps === 0;
      this.markHover();
    }

    step() {
      return Number(this.slider.value) - 1;
    }

    askStep() {
      this.stepChosen = true;
      this.throttled("board-step");
    }

    // ---- your turn: the reader picks points in order; the server scores the picks ----

    get turn() {
      return Boolean(this.turnBox?.checked);
    }

    picks() {
      return this.mineField.value.split(",").filter(Boolean).map(Number);
    }

    setPicks(picks, cause) {
      this.mineField.value = picks.join(",");
      this.cause = cause;
      this.stopPlaying();
      htmx.trigger(this.form, "board-change");
    }

    pick(index) {
      const picks = this.picks();
      if (picks.includes(index + 1)) {
        this.say(this.turnBox, `Point ${index + 1} is picked already; Backspace undoes the last pick.`);
        return;
      }
      this.setPicks([...picks, index + 1], this.canvas);
    }

    // ---- watch it learn: static/js/hx-widgets.js sets the snapshot field; moving the slider
    // asks for the board like stepping through a decode (a change of the box, like any change)

    bindLearning() {
      this.root.addEventListener("input", (event) => {
        if (!event.target.matches("[data-learning-slider]")) return;
        this.cause = event.target;
        this.throttled("board-step");
      });
    }

    bindTurn() {
      if (!this.turnBox) return;
      this.turnBox.addEventListener("change", () => (this.mineField.value = ""));
      const undo = this.root.querySelector("[data-mine-undo]");
      undo.addEventListener("click", () => this.setPicks(this.picks().slice(0, -1), undo));
      const clear = this.root.querySelector("[data-mine-clear]");
      clear.addEventListener("click", () => this.setPicks([], clear));
    }

    // ---- controls ----

    bind() {
      const root = this.root;
      this.bindTurn();
      this.bindLearning();
      // controls of the script alone, and the view option: not the board's state
      for (const el of root.querySelectorAll("[data-random-n], [data-show-exact]")) {
        el.addEventListener("change", (event) => event.stopPropagation());
      }
      const random = root.querySelector("[data-random]");
      random.addEventListener("click", () => {
        const field = root.querySelector("[data-random-n]");
        const n = Number(field.value);
        const { min_inputs: low, max_inputs: high } = this.config;
        if (!Number.isInteger(n) || n < low || n > high) {
          const noun = this.isSort ? "values" : "points";
          const asked = field.value.trim() || "nothing";
          this.say(field, `The board takes ${low} to ${high} ${noun}; n = ${asked} is outside that, so the board is unchanged.`);
          return;
        }
        const draw = () => (this.isSort ? round3(Math.random()) : [round3(Math.random()), round3(Math.random())]);
        this.send(Array.from({ length: n }, draw), "board-change", random);
      });
      const clear = root.querySelector("[data-clear]");
      clear.addEventListener("click", () => this.send([], "board-change", clear));
      const example = root.querySelector("[data-example]");
      example.addEventListener("click", () => {
        this.typed.value = this.config.example;
        this.send(this.inputs(), "board-change", example);
      });
      this.slider.addEventListener("input", () => {
        this.stopPlaying();
        this.cause = this.slider;
        this.askStep();
      });
      // the control that asks for the next answer: a refusal's sentence goes beside it
      this.form.addEventListener("change", (event) => (this.cause = event.target), true);
      this.form.addEventListener("submit", (event) => (this.cause = event.submitter || this.typed), true);
      this.play.addEventListener("click", () => (this.timer ? this.stopPlaying() : this.startPlaying()));
      this.canvas.addEventListener("htmx:afterSwap", () => this.answered());
      this.form.addEventListener("htmx:configRequest", (event) => {
        const data = event.detail.formData;
        if (this.refused && this.typed.value === this.refusedText && !this.typedBy(this.cause)) {
          this.typed.value = this.accepted; // the reader moved on from the refused text
          data.set(this.typed.name, this.accepted);
        }
        this.unread(data);
        this.stepChosen = false; // this request carries the slider's step
        this.asked = { cause: this.cause, text: this.typed.value };
        this.unprefixed(data);
      });
      // a refused answer's sentence goes to the error line (static/js/hx-widgets.js, which
      // listens on the document, so the line is in its place first)
      this.form.addEventListener("htmx:afterRequest", (event) => {
        const status = event.detail.xhr?.status ?? 0;
        if (status !== 0 && this.asked) this.settled(status, this.asked);
      });
      this.form.addEventListener("htmx:sendError", () => this.asked && this.settled(0, this.asked));
      const on = (name, handler) => this.canvas.addEventListener(name, handler.bind(this));
      on("pointerdown", this.onPointerDown);
      on("pointermove", this.onPointerMove);
      on("pointerup", this.onPointerUp);
      on("pointercancel", this.endPress);
      on("contextmenu", this.onContextMenu);
      on("keydown", this.onKey);
      // a point on the board and its column in the heatmap (the result slot) mark each other
      root.addEventListener("pointerover", (event) => this.setHover(this.indexOf(event.target)));
      root.addEventListener("pointerout", () => this.setHover(null));
    }

    startPlaying() {
      if (this.step() >= Number(this.slider.max) - 1) this.slider.value = 1;
      this.showPlaying(true);
      this.cause = this.slider;
      this.askStep();
      this.timer = setInterval(() => {
        if (this.step() >= Number(this.slider.max) - 1) return this.stopPlaying();
        this.slider.value = this.step() + 2;
        this.askStep();
      }, PLAY_MS);
    }

    stopPlaying() {
      if (!this.timer) return;
      clearInterval(this.timer);
      this.timer = null;
      this.showPlaying(false);
    }

    showPlaying(playing) {
      this.play.textContent = playing ? "Pause" : "Play";
      this.play.setAttribute("aria-label", `${this.play.textContent} the decoding`);
      this.root.classList.toggle("is-playing", playing);
    }

    // ---- the board: add, drag, delete, move with keys ----

    // the input a board mark or a heatmap column stands for
    indexOf(target) {
      const mark = target.closest?.("[data-index], [data-column]");
      return mark ? Number(mark.dataset.index ?? mark.dataset.column) : null;
    }

    // A pointer event -> a point of the unit square, or a value on the sorting line.
    unitFromEvent(event) {
      const svg = this.svg;
      const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
      const frame = svg.viewBox.baseVal.width;
      const pad = 24;
      const u = clamp01((p.x - pad) / (frame - 2 * pad));
      if (!this.isSort) return [round3(u), round3(clamp01((frame - pad - p.y) / (frame - 2 * pad)))];
      const low = Number(svg.dataset.low);
      const high = Number(svg.dataset.high);
      return round3(low + u * (high - low));
    }

    onPointerDown(event) {
      if (event.button !== 0) return;
      const index = this.indexOf(event.target);
      this.press = { index, x: event.clientX, y: event.clientY, moved: false, removed: false };
      if (index === null) return;
      event.preventDefault();
      this.canvas.setPointerCapture(event.pointerId);
      this.press.timer = setTimeout(() => this.longPress(), LONG_PRESS_MS);
    }

    longPress() {
      const press = this.press;
      if (!press || press.moved || press.removed || this.turn) return;
      clearTimeout(press.timer);
      press.removed = true;
      this.remove(press.index);
    }

    onPointerMove(event) {
      const press = this.press;
      if (!press || press.removed || this.turn) return; // on your turn points stay put
      const dx = event.clientX - press.x;
      const dy = event.clientY - press.y;
      const slop = press.index === null ? TAP_SLOP : DRAG_SLOP;
      if (!press.moved && Math.hypot(dx, dy) < slop) return;
      press.moved = true;
      if (press.index === null) return; // a swipe over the empty board adds nothing
      clearTimeout(press.timer);
      // the mark follows the pointer at once; the server redraws the board as answers come
      const mark = this.svg.querySelector(`[data-index="${press.index}"]`);
      const scale = this.svg.viewBox.baseVal.width / this.svg.getBoundingClientRect().width;
      mark?.setAttribute("transform", `translate(${dx * scale} ${this.isSort ? 0 : dy * scale})`);
      const inputs = this.boardInputs();
      inputs[press.index] = this.unitFromEvent(event);
      this.send(inputs, "board-drag");
    }

    onPointerUp(event) {
      const press = this.press;
      this.endPress();
      if (!press) return;
      if (this.turn) {
        if (press.index !== null && !press.removed) this.pick(press.index);
        return; // your turn adds no point
      }
      if (press.index === null) {
        // a tap adds a point (one past the limit too: the server's sentence says so)
        if (!press.moved && event.target.closest(".pb-hit")) {
          this.send([...this.boardInputs(), this.unitFromEvent(event)]);
        }
      } else if (press.moved) {
        const inputs = this.boardInputs();
        inputs[press.index] = this.unitFromEvent(event);
        this.send(inputs);
      } else if (!press.removed) {
        this.svg.querySelector(`[data-index="${press.index}"]`)?.focus();
      }
    }

    endPress() {
      if (this.press) clearTimeout(this.press.timer);
      this.press = null;
    }

    onContextMenu(event) {
      const index = this.indexOf(event.target);
      if (index === null || this.turn) return;
      event.preventDefault();
      // a phone fires contextmenu on a long press too: remove the point only once
      if (this.press && this.press.index === index) this.longPress();
      else this.remove(index);
    }

    remove(index) {
      const inputs = this.boardInputs();
      inputs.splice(index, 1);
      this.send(inputs);
    }

    onKey(event) {
      const index = this.indexOf(event.target);
      if (index === null) return;
      if (this.turn) {
        if (event.key === "Enter" || event.key === " ") this.pick(index);
        else if (event.key === "Backspace" || event.key === "Delete") this.setPicks(this.picks().slice(0, -1), this.canvas);
        else return;
        event.preventDefault();
        return;
      }
      if (event.key === "Delete" || event.key === "Backspace") {
        event.preventDefault();
        this.remove(index);
        return;
      }
      const d = event.shiftKey ? 0.05 : 0.01;
      const move = { ArrowLeft: [-d, 0], ArrowRight: [d, 0], ArrowUp: [0, d], ArrowDown: [0, -d] }[event.key];
      if (!move) return;
      event.preventDefault();
      const inputs = this.boardInputs();
      const old = inputs[index];
      inputs[index] = this.isSort
        ? round3(old + move[0] + move[1])
        : [round3(clamp01(old[0] + move[0])), round3(clamp01(old[1] + move[1]))];
      this.send(inputs); // htmx puts the focus back on the mark with the same id
    }

    // ---- hover links between the board and the heatmap ----

    setHover(index) {
      if (this.hover === index) return;
      this.hover = index;
      this.markHover();
    }

    markHover() {
      for (const mark of this.root.querySelectorAll("[data-board-svg] [data-index], [data-column]")) {
        mark.classList.toggle("is-hovered", this.indexOf(mark) === this.hover);
      }
    }
  }

  for (const root of document.querySelectorAll("[data-pointer-board]")) {
    root.pointerBoard = new Board(root);
  }
})();
