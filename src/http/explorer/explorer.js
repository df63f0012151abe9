// Starts Swagger UI on sheetd's own OpenAPI document. Everything the page
// loads comes from this server: the online validator Swagger UI would ask
// by default is turned off.
"use strict";
window.addEventListener("load", function () {
  window.explorer = SwaggerUIBundle({
    url: "docs/openapi.json",
    dom_id: "#explorer",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    validatorUrl: null,
    deepLinking: true,
    displayRequestDuration: true,
    // The token a user enters stays in this tab only.
    persistAuthorization: false,
  });
});
