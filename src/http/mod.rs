//! The HTTP layer: routes, extractors, handlers, errors and the layers
//! around them (request ids and trace spans, panics → JSON, body limit,
//! authentication, 404/405 fallbacks).

mod auth;
pub mod error;
mod extract;
mod openapi;
mod rows;
mod spreadsheets;

use std::future::Future;
use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request};
use axum::http::HeaderName;
use axum::{Json, Router, middleware};
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::config::Config;
use crate::store::Store;
use error::ApiError;

/// Everything a handler may need; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Store,
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole service as a router, for `serve` and for tests.
pub fn app(state: AppState) -> Router {
    let layers = ServiceBuilder::new()
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request| {
            let id = req
                .headers()
                .get(REQUEST_ID)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-");
            tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path())
        }))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(CatchPanicLayer::custom(|_| {
            axum::response::IntoResponse::into_response(ApiError::internal("a handler panicked"))
        }))
        .layer(middleware::from_fn_with_state(state.clone(), auth::require_token))
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes));
    let (router, _) = routes().split_for_parts();
    router
        .fallback(|| async { ApiError::NotFound(None) })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state)
        .layer(layers)
}

/// Every route, each registered with its OpenAPI description.
fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(healthz))
        .routes(routes!(openapi::openapi_json))
        .merge(rows::router())
        .merge(spreadsheets::router())
}

/// Serves `state` on `listener` until `shutdown` resolves, then finishes the
/// requests in flight.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
}

/// §4.6 `GET /healthz`: 200 `{"status": "ok"}`, never needs a token.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, description = "The service is up", body = openapi::Health)))]
async fn healthz() -> Json<openapi::Health> {
    Json(openapi::Health {
        status: "ok".into(),
    })
}
