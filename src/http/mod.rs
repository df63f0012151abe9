//! The HTTP layer: routes, extractors, handlers, errors and the layers
//! around them (request ids and trace spans, panics → JSON, body limit,
//! authentication, 404/405 fallbacks), and the API explorer at `/docs`.

mod admit;
pub mod audit;
mod auth;
mod batch;
mod conditional;
pub mod error;
mod explorer;
mod extract;
mod idempotency;
mod openapi;
mod rows;
pub mod serve;
mod spreadsheets;
mod stream;
mod versions;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request};
use axum::http::Response;
use axum::http::{HeaderName, HeaderValue, Method, header as http_header};
use axum::{Json, Router, middleware};
use serde::Serialize;
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::access::Keyring;
use crate::config::Config;
use crate::store::Store;
use audit::AuditLog;
use error::ApiError;

/// Everything a handler may need; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Store,
    /// The tokens accepted, kept current with `--tokens-file`.
    pub keyring: Arc<Keyring>,
    /// `--audit-log`, open.
    pub audit: Option<Arc<AuditLog>>,
}

impl AppState {
    /// The state of a server with this configuration and store; an
    /// unreadable tokens file is an error.
    pub fn new(config: Config, store: Store) -> Result<AppState, String> {
        let keyring = Keyring::new(config.command_line_grants(), config.tokens_file.as_deref())?;
        let audit = match &config.audit_log {
            Some(path) => Some(Arc::new(AuditLog::open(path).map_err(|e| {
                format!("the audit log {} cannot be opened: {e}", path.display())
            })?)),
            None => None,
        };
        Ok(AppState {
            config: Arc::new(config),
            store,
            keyring: Arc::new(keyring),
            audit,
        })
    }
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The detail of a 404 for a path no route has.
const NO_ROUTE: &str = "no route has this path; rows are at /v1/data/{spreadsheet_id}/{sheet_name}, \
     workbooks at /v1/spreadsheets, and /v1/openapi.json lists every route";

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
        })
        // One line per request at the default level (contract §9): the span
        // gives method, path and request id; this adds status and time.
        .on_response(LogAnswer))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        // Outside authentication: a browser's preflight carries no token.
        .layer(middleware::from_fn(preflight_no_content))
        .option_layer(cors(&state.config.cors_origins))
        .layer(CatchPanicLayer::custom(|_| {
            axum::response::IntoResponse::into_response(ApiError::internal("a handler panicked"))
        }))
        // Outside authentication: writes it refuses are logged too.
        .layer(middleware::from_fn_with_state(state.clone(), audit::record))
        .layer(middleware::from_fn_with_state(state.clone(), auth::require_token))
        .layer(middleware::from_fn_with_state(
            admit::Admission::of(&state.config),
            admit::admit,
        ))
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes));
    let (router, _) = routes().split_for_parts();
    router
        .merge(explorer::router())
        .fallback(|| async { ApiError::NotFound(Some(NO_ROUTE.into())) })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state)
        .layer(layers)
}

/// §10.4: browsers on `origins` may call the API (`*`: any); with none
/// configured CORS is off, and a preflight gets 405 like any `OPTIONS`.
fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        // Checked at start-up (`config::parse_origin`).
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([
                Method::GET,
                Method::POST,
                Method::PATCH,
                Method::PUT,
                Method::DELETE,
            ])
            .allow_headers([
                http_header::AUTHORIZATION,
                http_header::CONTENT_TYPE,
                http_header::ACCEPT,
                idempotency::IDEMPOTENCY_KEY,
                REQUEST_ID,
                http_header::IF_MATCH,
                http_header::IF_NONE_MATCH,
                http_header::IF_MODIFIED_SINCE,
                http_header::IF_UNMODIFIED_SINCE,
            ])
            .expose_headers([
                REQUEST_ID,
                http_header::RETRY_AFTER,
                http_header::LINK,
                http_header::CONTENT_DISPOSITION,
                stream::TOTAL_COUNT,
                idempotency::REPLAYED,
                http_header::ETAG,
                http_header::LAST_MODIFIED,
            ])
            .max_age(Duration::from_secs(600)),
    )
}

/// A preflight answers 204 No Content (§10.4), where the CORS layer says
/// 200 with an empty body.
async fn preflight_no_content(req: Request, next: middleware::Next) -> axum::response::Response {
    let preflight = req.method() == Method::OPTIONS;
    let mut response = next.run(req).await;
    if preflight && response.status() == axum::http::StatusCode::OK {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    response
}

/// Logs the status and time of each answer, at the default level.
#[derive(Clone, Copy)]
struct LogAnswer;

impl<B> tower_http::trace::OnResponse<B> for LogAnswer {
    fn on_response(self, response: &Response<B>, latency: Duration, _: &tracing::Span) {
        tracing::info!(
            status = response.status().as_u16(),
            ms = latency.as_millis(),
            "answered"
        );
    }
}

/// Every route, each registered with its OpenAPI description.
fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(healthz))
        .routes(routes!(openapi::openapi_json))
        .merge(rows::router())
        .merge(batch::router())
        .merge(versions::router())
        .merge(spreadsheets::router())
}

/// Serves `state` on `listener` until `shutdown` resolves, then finishes the
/// requests in flight.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = serve::ConnectionLimits::of(&state.config).within_open_file_limit();
    serve::serve_router(listener, app(state), limits, shutdown).await
}

/// Health check
///
/// Answers `{"status": "ok"}` while the service runs; never needs a token.
// Contract §4.6.
#[utoipa::path(get, path = "/healthz", tag = "service",
    responses((status = 200, description = "The service is up", body = Health), openapi::Errors))]
async fn healthz(_: extract::NoQuery) -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// Always `ok`.
    pub status: String,
}
