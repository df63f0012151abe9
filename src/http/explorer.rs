//! `GET /docs` (§10.4): an interactive explorer of the API — Swagger UI on
//! the served OpenAPI document, with "try it out" calls against this server.
//!
//! Swagger UI's assets are vendored from the npm package `swagger-ui-dist`
//! (`explorer/vendor/VERSION` names the version and its integrity;
//! `tools/explorer/update.sh` fetches another) and embedded in the binary:
//! the page needs no internet access. The page, its assets and the copy of
//! the OpenAPI document it reads need no token, so that a user can open it
//! and then enter one (see `auth`).

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::AppState;
use super::error::ApiError;
use super::extract::NoQuery;
use super::openapi;

/// The page: everything it loads comes from this server, and calls go to
/// this server only.
const PAGE: &[u8] = include_bytes!("explorer/index.html");
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The assets under `/docs/`, by name: content type and bytes.
const ASSETS: [(&str, &str, &[u8]); 4] = [
    (
        "swagger-ui-bundle.js",
        "text/javascript; charset=utf-8",
        include_bytes!("explorer/vendor/swagger-ui-bundle.js"),
    ),
    (
        "swagger-ui.css",
        "text/css; charset=utf-8",
        include_bytes!("explorer/vendor/swagger-ui.css"),
    ),
    (
        "explorer.js",
        "text/javascript; charset=utf-8",
        include_bytes!("explorer/explorer.js"),
    ),
    (
        "explorer.css",
        "text/css; charset=utf-8",
        include_bytes!("explorer/explorer.css"),
    ),
];

/// How long a browser may keep the page and its assets without asking again.
const CACHE_CONTROL: &str = "public, max-age=300";

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/",
            get(|_: NoQuery| async { Redirect::temporary("/docs") }),
        )
        .route("/docs", get(page))
        .route(
            "/docs/",
            get(|_: NoQuery| async { Redirect::permanent("/docs") }),
        )
        .route("/docs/openapi.json", get(openapi::openapi_json))
        .route("/docs/{asset}", get(asset))
}

/// Whether `path` is one of the explorer's (read without a token); any
/// other path under `/docs/` needs one, as every path does.
pub fn is_explorer(path: &str) -> bool {
    match path.strip_prefix("/docs/") {
        Some(name) => {
            matches!(name, "" | "openapi.json") || ASSETS.iter().any(|(asset, _, _)| *asset == name)
        }
        None => path == "/" || path == "/docs",
    }
}

async fn page(_: NoQuery) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, CACHE_CONTROL),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        PAGE,
    )
        .into_response()
}

async fn asset(Path(name): Path<String>, _: NoQuery) -> Response {
    match ASSETS.iter().find(|(asset, _, _)| *asset == name) {
        Some((_, content_type, bytes)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, *content_type),
                (header::CACHE_CONTROL, CACHE_CONTROL),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            *bytes,
        )
            .into_response(),
        None => ApiError::NotFound(Some(format!(
            "the explorer has no file {name:?}; the explorer is at /docs"
        )))
        .into_response(),
    }
}
