// Starts the vendored Swagger UI on /docs; the schema URL comes from a data attribute, so the
// page needs no inline script under the site's Content-Security-Policy.
(() => {
  const root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
})();
