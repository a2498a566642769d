// The routing figures' forms name their fields as the page address does (attn-layer, rl-seed);
// their htmx requests send them without the prefix, as the API reads them.
// The encoder-attention figure (templates/partials/widgets/routing-attention.html): hovering
// over a city, or focusing it, redraws the lines from it with the weights its row of the
// answer carries (no request); a click or Enter makes it the figure's city (the form's field,
// sent by htmx, so the address and the readout follow).
"use strict";

(() => {
  function redraw(figure, number) {
    const weights = JSON.parse(figure.querySelector("[data-routing-weights]").textContent);
    const cities = [...figure.querySelectorAll("[data-city-number]")];
    const from = cities[number - 1]?.querySelector("circle");
    if (!from) return;
    const lines = figure.querySelectorAll("[data-lines] line");
    weights[number - 1].forEach((weight, j) => {
      const line = lines[j];
      line.setAttribute("x1", from.getAttribute("cx"));
      line.setAttribute("y1", from.getAttribute("cy"));
      line.setAttribute("stroke-width", (0.5 + 12 * weight).toFixed(2));
    });
    cities.forEach((city, i) => city.classList.toggle("is-focus", i === number - 1));
  }

  function choose(figure, number) {
    const field = figure.querySelector("[data-city]");
    field.value = number;
    field.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function cityOf(event) {
    const city = event.target.closest?.("[data-city-number]");
    const figure = city?.closest("[data-routing-attention]");
    return city && figure ? { figure, number: Number(city.dataset.cityNumber) } : null;
  }

  document.addEventListener("htmx:configRequest", (event) => {
    const form = event.detail.elt.closest?.("[data-routing-form]");
    if (!form) return;
    const prefix = form.dataset.prefix;
    const data = event.detail.formData;
    for (const [name, value] of [...data.entries()]) {
      if (!name.startsWith(prefix)) continue;
      data.delete(name);
      data.append(name.slice(prefix.length), value);
    }
  });

  document.addEventListener("pointerover", (event) => {
    const found = cityOf(event);
    if (found) redraw(found.figure, found.number);
  });
  document.addEventListener("focusin", (event) => {
    const found = cityOf(event);
    if (found) redraw(found.figure, found.number);
  });
  document.addEventListener("click", (event) => {
    const found = cityOf(event);
    if (found) choose(found.figure, found.number);
  });
  document.addEventListener("keydown", (event) => {
    const found = cityOf(event);
    if (found && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      choose(found.figure, found.number);
    }
  });
})();
