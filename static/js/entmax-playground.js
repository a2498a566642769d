// The α playground: collects the sentence, the scores and α, asks the server for α-entmax
// (POST /api/entmax with HX-Request, which answers with HTML fragments) and swaps them in.
// All the numbers come from the server; this file only gathers input and draws the score bars.
"use strict";

const ENTMAX_URL_KEYS = { text: "entmax-text", scores: "entmax-scores", alpha: "entmax-alpha" };
const ENTMAX_MAX_LABEL = 64;
const ENTMAX_DRAG_QUANTUM = 0.05;
const ENTMAX_URL_DELAY_MS = 250;

function tokenize(text) {
  return text.trim().split(/\s+/).filter(Boolean);
}

function initEntmaxPlayground(root) {
  const config = JSON.parse(root.querySelector("[data-entmax-config]").textContent);
  const examples = new Map(config.examples.map((example) => [example.key, example]));
  const exampleSelect = root.querySelector("[data-entmax-example]");
  const textInput = root.querySelector("[data-entmax-text]");
  const alphaInput = root.querySelector("[data-entmax-alpha]");
  const alphaValue = root.querySelector("[data-entmax-alpha-value]");
  const scoreList = root.querySelector("[data-entmax-scores]");
  const errorLine = root.querySelector("[data-entmax-error]");
  const span = config.scoreSpan;

  const fallback = examples.get(config.default);
  const state = { text: fallback.text, scores: [...fallback.scores], alpha: config.alpha };

  // ---- state <-> URL ----

  function readUrl() {
    const params = new URLSearchParams(window.location.search);
    if (!params.has(ENTMAX_URL_KEYS.text) && !params.has(ENTMAX_URL_KEYS.alpha)) return false;
    if (params.has(ENTMAX_URL_KEYS.text)) {
      state.text = params.get(ENTMAX_URL_KEYS.text);
      const raw = params.get(ENTMAX_URL_KEYS.scores) || "";
      const given = raw === "" ? [] : raw.split(",").map(Number);
      state.scores = tokenize(state.text).map((_, i) => (i < given.length ? given[i] : 0));
    }
    if (params.has(ENTMAX_URL_KEYS.alpha)) {
      alphaInput.value = params.get(ENTMAX_URL_KEYS.alpha);
      state.alpha = alphaInput.valueAsNumber; // the slider clamps it to its range
    }
    return true;
  }

  let urlTimer = 0;
  function writeUrlSoon() {
    // Browsers throttle history updates; one write after the reader pauses is enough.
    window.clearTimeout(urlTimer);
    urlTimer = window.setTimeout(() => {
      const params = new URLSearchParams(window.location.search);
      params.set(ENTMAX_URL_KEYS.text, state.text);
      params.set(ENTMAX_URL_KEYS.scores, state.scores.map(String).join(","));
      params.set(ENTMAX_URL_KEYS.alpha, String(state.alpha));
      const url = `${window.location.pathname}?${params}${window.location.hash}`;
      window.history.replaceState(window.history.state, "", url);
    }, ENTMAX_URL_DELAY_MS);
  }

  // ---- requests: at most one in flight; the latest state goes next ----

  let wanted = false;
  let busy = false;
  let frame = 0;

  function requestUpdate() {
    wanted = true;
    if (!busy && !frame) frame = window.requestAnimationFrame(send);
    writeUrlSoon();
  }

  async function send() {
    frame = 0;
    if (!wanted) return;
    wanted = false;
    busy = true;
    const body = {
      scores: state.scores,
      alpha: state.alpha,
      labels: tokenize(state.text).map((token) => token.slice(0, ENTMAX_MAX_LABEL)),
    };
    try {
      const response = await fetch(config.endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json", "HX-Request": "true" },
        body: JSON.stringify(body),
      });
      if (response.ok) {
        swapSlots(await response.text());
        showError(null);
      } else {
        const problem = await response.json().catch(() => null);
        showError(problem?.detail ?? `The server answered ${response.status}; try again.`);
      }
    } catch {
      showError("The server could not be reached; try again.");
    } finally {
      busy = false;
      if (wanted) frame = window.requestAnimationFrame(send);
    }
  }

  function swapSlots(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    for (const fresh of template.content.querySelectorAll("[data-entmax-slot]")) {
      const current = root.querySelector(`[data-entmax-slot="${fresh.dataset.entmaxSlot}"]`);
      if (current) current.replaceWith(fresh);
    }
    drawSupport();
  }

  function showError(message) {
    errorLine.hidden = message === null;
    errorLine.textContent = message ?? "";
    root.classList.toggle("is-stale", message !== null);
  }

  // ---- drawing ----

  function buildRows() {
    const tokens = tokenize(state.text);
    const rows = tokens.map((token, i) => {
      const row = document.createElement("li");
      row.className = "entmax-score";
      const label = document.createElement("span");
      label.className = "token";
      label.textContent = token;
      label.title = token;
      const input = document.createElement("input");
      input.className = "score-input";
      input.type = "number";
      input.step = "0.1";
      input.value = String(state.scores[i]);
      input.setAttribute("aria-label", `Score of “${token}” (word ${i + 1})`);
      const track = document.createElement("span");
      track.className = "score-track";
      track.setAttribute("aria-hidden", "true");
      const fill = document.createElement("span");
      fill.className = "score-fill";
      const cut = document.createElement("span");
      cut.className = "score-cut";
      cut.hidden = true;
      track.append(fill, cut);
      row.append(label, input, track);
      return row;
    });
    scoreList.replaceChildren(...rows);
    drawScores();
  }

  function scoreToPercent(value) {
    return 50 + (Math.max(-span, Math.min(span, value)) / span) * 50;
  }

  function drawScore(row, value) {
    const fill = row.querySelector(".score-fill");
    const end = Number.isFinite(value) ? scoreToPercent(value) : 50;
    fill.style.left = `${Math.min(50, end)}%`;
    fill.style.width = `${Math.abs(end - 50)}%`;
    row.classList.toggle("is-clipped", Math.abs(value) > span);
  }

  function drawScores() {
    const rows = scoreList.querySelectorAll(".entmax-score");
    rows.forEach((row, i) => drawScore(row, state.scores[i]));
    drawSupport();
  }

  // The server's cut-off line on every score bar, and which words it keeps.
  function drawSupport() {
    const stats = root.querySelector('[data-entmax-slot="stats"]');
    const bars = root.querySelectorAll('[data-entmax-slot="bars"] .entmax-bar');
    const raw = stats.dataset.scoreThreshold;
    const threshold = raw === "" ? NaN : Number(raw);
    const inRange = Number.isFinite(threshold) && Math.abs(threshold) <= span;
    scoreList.querySelectorAll(".entmax-score").forEach((row, i) => {
      const cut = row.querySelector(".score-cut");
      cut.hidden = !inRange;
      if (inRange) cut.style.left = `${scoreToPercent(threshold)}%`;
      row.classList.toggle("is-out", bars.length > i && bars[i].classList.contains("is-zero"));
    });
    alphaInput.setAttribute(
      "aria-valuetext",
      `α ${state.alpha.toFixed(2)}, support ${stats.dataset.supportSize} of ${bars.length}`,
    );
  }

  function markCustom() {
    exampleSelect.value = "custom";
  }

  // ---- input ----

  function setScore(index, value) {
    state.scores[index] = value;
    drawScore(scoreList.children[index], value);
    markCustom();
    requestUpdate();
  }

  alphaInput.addEventListener("input", () => {
    state.alpha = alphaInput.valueAsNumber;
    alphaValue.textContent = state.alpha.toFixed(2);
    requestUpdate();
  });

  textInput.addEventListener("input", () => {
    state.text = textInput.value;
    const count = tokenize(state.text).length;
    state.scores = Array.from({ length: count }, (_, i) => state.scores[i] ?? 0);
    buildRows();
    markCustom();
    requestUpdate();
  });

  exampleSelect.addEventListener("change", () => {
    const example = examples.get(exampleSelect.value);
    if (!example) return;
    state.text = example.text;
    state.scores = [...example.scores];
    textInput.value = state.text;
    buildRows();
    requestUpdate();
  });

  scoreList.addEventListener("input", (event) => {
    const input = event.target.closest(".score-input");
    if (!input) return;
    const index = [...scoreList.children].indexOf(input.closest(".entmax-score"));
    // An empty or malformed entry goes to the server as null; its 422 says what to fix.
    setScore(index, input.value === "" ? NaN : input.valueAsNumber);
  });

  function dragScore(event, track) {
    const box = track.getBoundingClientRect();
    const fraction = Math.max(0, Math.min(1, (event.clientX - box.left) / box.width));
    const steps = Math.round(((fraction * 2 - 1) * span) / ENTMAX_DRAG_QUANTUM);
    const value = steps * ENTMAX_DRAG_QUANTUM;
    const row = track.closest(".entmax-score");
    const index = [...scoreList.children].indexOf(row);
    const rounded = Number(value.toFixed(2));
    row.querySelector(".score-input").value = String(rounded);
    setScore(index, rounded);
  }

  scoreList.addEventListener("pointerdown", (event) => {
    const track = event.target.closest(".score-track");
    if (!track || event.button !== 0) return;
    event.preventDefault();
    track.setPointerCapture(event.pointerId);
    track.classList.add("is-dragging");
    dragScore(event, track);
  });
  scoreList.addEventListener("pointermove", (event) => {
    const track = event.target.closest(".score-track");
    if (track && track.hasPointerCapture(event.pointerId)) dragScore(event, track);
  });
  for (const type of ["pointerup", "pointercancel"]) {
    scoreList.addEventListener(type, (event) => {
      const track = event.target.closest(".score-track");
      if (track) track.classList.remove("is-dragging");
    });
  }

  // ---- start: the server rendered the default; a shared address overrides it ----

  // Controls are set from the state either way: a reload may have restored stale form values.
  const fromUrl = readUrl();
  textInput.value = state.text;
  alphaInput.value = String(state.alpha);
  alphaValue.textContent = state.alpha.toFixed(2);
  const match = [...examples.values()].find(
    (e) => e.text === state.text && e.scores.join(",") === state.scores.join(","),
  );
  exampleSelect.value = match ? match.key : "custom";
  buildRows();
  if (fromUrl) requestUpdate();
  root.dataset.ready = "true";
}

document.querySelectorAll("[data-entmax-playground]").forEach(initEntmaxPlayground);
