// The figures that introduce the α-entmax family. The server computed every number
// (app/entmax_service.py) and put them in a JSON data block; this file only draws them.
"use strict";

function entmaxCssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

function entmaxPlotTheme() {
  const ink = entmaxCssVar("--ink-soft");
  const rule = entmaxCssVar("--rule");
  return {
    ink,
    rule,
    font: { family: entmaxCssVar("--sans"), size: 12, color: ink },
    curveColors: [1, 2, 3, 4, 5].map((i) => entmaxCssVar(`--entmax-alpha-${i}`)),
    supportColors: {
      3: entmaxCssVar("--entmax-support-3"),
      2: entmaxCssVar("--entmax-support-2"),
      1: entmaxCssVar("--entmax-support-1"),
    },
  };
}

const ENTMAX_PLOT_CONFIG = { responsive: true, displayModeBar: false };
const ENTMAX_DASHES = ["solid", "dash", "solid", "dot", "dashdot"];
const ENTMAX_SYMBOLS = { 3: "circle", 2: "diamond", 1: "square" };

function drawEntmaxCurves(element, data, theme) {
  const traces = data.curves.map((curve, i) => ({
    type: "scatter",
    mode: "lines",
    name: curve.label,
    x: data.t,
    y: curve.p,
    line: { color: theme.curveColors[i], width: 2.5, dash: ENTMAX_DASHES[i] },
    hovertemplate: `${curve.label}<br>t = %{x:.2f}<br>p₁ = %{y:.4f}<extra></extra>`,
  }));
  const [low, high] = [data.t[0], data.t[data.t.length - 1]];
  data.curves.forEach((curve, i) => {
    if (curve.saturatesAt === null || curve.saturatesAt > high) return;
    traces.push({
      type: "scatter",
      mode: "markers",
      x: [-curve.saturatesAt, curve.saturatesAt],
      y: [0, 1],
      marker: { color: theme.curveColors[i], size: 8 },
      showlegend: false,
      hovertemplate: `${curve.label}: exactly %{y} from t = %{x:.2f}<extra></extra>`,
    });
  });
  const axis = { gridcolor: theme.rule, zerolinecolor: theme.rule, linecolor: theme.rule };
  const layout = {
    font: theme.font,
    height: 380,
    margin: { l: 52, r: 12, t: 8, b: 96 },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    xaxis: { ...axis, title: { text: "t" }, range: [low, high] },
    yaxis: { ...axis, title: { text: "entmax([t, 0])₁" }, range: [-0.04, 1.04] },
    legend: { orientation: "h", x: 0, y: -0.2, yanchor: "top" },
    hovermode: "closest",
  };
  Plotly.newPlot(element, traces, layout, ENTMAX_PLOT_CONFIG);
}

function drawEntmaxSimplex(element, image, data, theme) {
  const traces = [3, 2, 1].map((support) => {
    const points = image.p
      .map((p, i) => [p, data.scores[i]])
      .filter((_, i) => image.support[i] === support);
    return {
      type: "scatterternary",
      mode: "markers",
      name: data.supportNames[String(support)],
      a: points.map(([p]) => p[0]),
      b: points.map(([p]) => p[1]),
      c: points.map(([p]) => p[2]),
      customdata: points.map(([, z]) => z),
      marker: {
        color: theme.supportColors[support],
        symbol: ENTMAX_SYMBOLS[support],
        size: support === 1 ? 9 : 5,
        opacity: 0.75,
      },
      hovertemplate:
        "z = (%{customdata[0]}, %{customdata[1]}, 0)<br>" +
        "p = (%{a:.3f}, %{b:.3f}, %{c:.3f})<extra></extra>",
    };
  });
  const axis = (title) => ({
    title: { text: title, font: { size: 12 } },
    showticklabels: false,
    ticks: "",
    linecolor: theme.ink,
    gridcolor: theme.rule,
  });
  const layout = {
    font: theme.font,
    // A triangle is wider than tall: no taller than its panel is wide.
    height: Math.round(Math.min(240, element.clientWidth + 20)),
    margin: { l: 28, r: 28, t: 44, b: 18 },
    paper_bgcolor: "rgba(0,0,0,0)",
    title: { text: image.label, font: { size: 13, color: theme.ink }, y: 0.97, yanchor: "top" },
    showlegend: false,
    ternary: {
      sum: 1,
      bgcolor: "rgba(0,0,0,0)",
      aaxis: axis("p₁"),
      baxis: axis("p₂"),
      caxis: axis("p₃"),
    },
  };
  Plotly.newPlot(element, traces, layout, ENTMAX_PLOT_CONFIG);
}

function drawEntmaxFamily(root) {
  const data = JSON.parse(root.querySelector("[data-entmax-family-data]").textContent);
  const theme = entmaxPlotTheme();
  drawEntmaxCurves(root.querySelector("[data-entmax-curves]"), data, theme);
  root.querySelectorAll("[data-entmax-simplex]").forEach((element) => {
    drawEntmaxSimplex(element, data.simplex[Number(element.dataset.entmaxSimplex)], data, theme);
  });
  root.dataset.ready = "true";
}

// Six plots are a lot of main-thread work: draw them when they come near the screen, so the
// rest of the page (the playground included) is interactive first.
const entmaxFamilyObserver = new IntersectionObserver(
  (entries, observer) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      drawEntmaxFamily(entry.target);
    }
  },
  { rootMargin: "400px 0px" },
);
document.querySelectorAll("[data-entmax-family]").forEach((root) => {
  entmaxFamilyObserver.observe(root);
});
