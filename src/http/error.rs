//! `ApiError`: every failure a client can see, and the one place that maps
//! failures to statuses and the contract's `{"success": false, ...}` body.

use std::collections::BTreeMap;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{IntoResponses, ToSchema};

use crate::model::{self, Problems};
use crate::store::StoreError;

/// Every error: `{"success": false, "error": "…", "detail"?: "…"}`.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// Always `false`.
    pub success: bool,
    /// `Not Found`, `Conflict`, … or, for a 400, the problems as
    /// `field: rule` joined by `", "`.
    pub error: String,
    /// More about the failure, when there is something safe to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Every status an error is answered with, and what it tells the client:
/// the table [`ApiError::status`] answers from and the OpenAPI description
/// lists ([`Errors`]).
const STATUSES: [(StatusCode, &str); 12] = [
    (
        StatusCode::BAD_REQUEST,
        "Validation: the body, query or id breaks the rules listed in `error`.",
    ),
    (
        StatusCode::UNAUTHORIZED,
        "Tokens are configured and the request carries no valid one.",
    ),
    (
        StatusCode::FORBIDDEN,
        "The token lacks the permission the request needs, or does not reach its sheet or \
         table; `detail` says which.",
    ),
    (
        StatusCode::NOT_FOUND,
        "Unknown spreadsheet, sheet, row or route.",
    ),
    (
        StatusCode::METHOD_NOT_ALLOWED,
        "The path has no route for this method.",
    ),
    (
        StatusCode::REQUEST_TIMEOUT,
        "The body was not sent in time (`--body-timeout-secs`); nothing was written.",
    ),
    (
        StatusCode::CONFLICT,
        "The write would lose or corrupt workbook content, or rows would move through \
         something a spreadsheet app changes only whole (an array formula, a pivot table, \
         a 3D reference's span); `detail` says why.",
    ),
    (
        StatusCode::PRECONDITION_FAILED,
        "Precondition Failed: the workbook is no longer the version If-Match or \
         If-Unmodified-Since names (for a PUT: If-Match on an id with no workbook, or \
         If-None-Match: * on one that has a workbook); nothing was written.",
    ),
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        "The body is over the configured limit.",
    ),
    (
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "The body has another content type than the route takes.",
    ),
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "A failure inside the service, or a stored file that is no workbook.",
    ),
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "Too many requests queued for the spreadsheet, in flight, or holding body memory; \
         retry after `Retry-After`.",
    ),
];

/// The error answers of an operation in the OpenAPI description, one per
/// status of [`STATUSES`] (405 aside: a described operation is a method
/// its path has), each with an [`ErrorBody`].
pub struct Errors;

impl IntoResponses for Errors {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
        STATUSES
            .iter()
            .filter(|(status, _)| *status != StatusCode::METHOD_NOT_ALLOWED)
            .map(|(status, means)| {
                let content = ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build();
                let response = ResponseBuilder::new()
                    .description(*means)
                    .content("application/json", content)
                    .build();
                (status.as_str().to_owned(), RefOr::T(response))
            })
            .collect()
    }
}

/// A failed request, by what it means for the client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the body or query breaks the rules listed.
    #[error("{0}")]
    Invalid(Problems),
    /// 401: tokens are configured and the request has no valid one.
    #[error("Unauthorized")]
    Unauthorized,
    /// 403: the token may not do this (a permission it lacks, a sheet
    /// beyond its reach); the detail says which.
    #[error("Forbidden")]
    Forbidden(Option<String>),
    /// 404: unknown spreadsheet, sheet, row or route; the detail says which.
    #[error("Not Found")]
    NotFound(Option<String>),
    /// 405: the route has no such method.
    #[error("Method Not Allowed")]
    MethodNotAllowed,
    /// 409: the write would lose or corrupt workbook content, or cannot be
    /// made to this workbook (a taken sheet name, too many sheets or
    /// cells); the detail says why.
    #[error("Conflict")]
    Conflict(String),
    /// 412: the workbook is no longer the version the request's `If-Match`
    /// or `If-Unmodified-Since` names (§11.5); nothing was written.
    #[error("Precondition Failed")]
    PreconditionFailed,
    /// 413: the body is over the configured limit.
    #[error("Payload Too Large")]
    PayloadTooLarge,
    /// 415: the body is not of the content type the route takes; the
    /// detail says which to send.
    #[error("Unsupported Media Type")]
    UnsupportedMediaType(&'static str),
    /// 408: the body did not arrive within the body timeout.
    #[error("Request Timeout")]
    RequestTimeout,
    /// 503: a bound on shared resources is reached (the detail says which);
    /// the client may retry after `Retry-After` seconds.
    #[error("Service Unavailable")]
    Unavailable(&'static str),
    /// 500: something failed inside the service. The cause is logged with
    /// the request id; the client gets only the detail, if one is safe to give.
    #[error("Internal Server Error")]
    Internal {
        cause: String,
        detail: Option<String>,
    },
}

/// What a 408 says.
const BODY_TIMEOUT: &str =
    "the request body did not arrive within the body timeout; nothing was written";

/// What a 412 says.
const PRECONDITION_FAILED: &str = "the workbook is no longer the version If-Match or \
     If-Unmodified-Since names (it was changed since): read it again for its current ETag; \
     nothing was written";

/// The handlers' result type.
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

impl ApiError {
    /// A 400 with one problem.
    pub fn invalid(field: &str, rule: impl Into<String>) -> ApiError {
        ApiError::Invalid(Problems::one(field, rule))
    }

    /// A 500 whose cause goes to the log only.
    pub fn internal(cause: impl Into<String>) -> ApiError {
        ApiError::Internal {
            cause: cause.into(),
            detail: None,
        }
    }

    /// The answer's status: one of [`STATUSES`].
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Invalid(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn detail(&self) -> Option<&str> {
        match self {
            ApiError::NotFound(detail)
            | ApiError::Forbidden(detail)
            | ApiError::Internal { detail, .. } => detail.as_deref(),
            ApiError::Conflict(detail) => Some(detail),
            ApiError::UnsupportedMediaType(detail) | ApiError::Unavailable(detail) => Some(detail),
            ApiError::RequestTimeout => Some(BODY_TIMEOUT),
            ApiError::PreconditionFailed => Some(PRECONDITION_FAILED),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal { cause, .. } = &self {
            // Runs inside the request's span, so the log line carries its id.
            tracing::error!(%cause, "request failed");
        }
        let body = ErrorBody {
            success: false,
            error: self.to_string(),
            detail: self.detail().map(str::to_owned),
        };
        let mut response = (self.status(), Json(body)).into_response();
        let headers = response.headers_mut();
        match self {
            ApiError::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::Unavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            _ => {}
        }
        response
    }
}

impl From<Problems> for ApiError {
    fn from(problems: Problems) -> Self {
        ApiError::Invalid(problems)
    }
}

impl From<model::Error> for ApiError {
    fn from(error: model::Error) -> Self {
        match error {
            model::Error::Invalid(problems) => ApiError::Invalid(problems),
            model::Error::NotFound(detail) => ApiError::NotFound(Some(detail)),
            model::Error::Conflict(detail) => ApiError::Conflict(detail),
            model::Error::Forbidden(detail) => ApiError::Forbidden(Some(detail)),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => ApiError::NotFound(Some("no spreadsheet has that id".into())),
            StoreError::Conflict(detail) => ApiError::Conflict(detail),
            StoreError::PreconditionFailed => ApiError::PreconditionFailed,
            StoreError::Busy => ApiError::Unavailable(
                "too many writes wait for this spreadsheet, or its turn did not come in time",
            ),
            StoreError::TooManyParses => ApiError::Unavailable(
                "too many workbooks are being read from their files; retry shortly",
            ),
            StoreError::KeyInUse => ApiError::Unavailable(
                "a request with this Idempotency-Key is being handled; retry once it is answered",
            ),
            StoreError::Moved => ApiError::Unavailable(
                "another program kept saving the workbook during the write; nothing was written",
            ),
            // Why, as an upload of the same bytes says it (§9: a
            // password-protected workbook is named as such).
            StoreError::Unreadable(cause) => ApiError::Internal {
                detail: Some(format!(
                    "the spreadsheet's file is not a readable xlsx workbook ({cause})"
                )),
                cause: format!("stored workbook unreadable: {cause}"),
            },
            StoreError::NotRegular => ApiError::Internal {
                cause: "the spreadsheet's file is a symbolic link or not a regular file".into(),
                detail: Some(
                    "the spreadsheet's file is not a regular file; sheetd serves only workbooks \
                     stored in its data directory, not links to them"
                        .into(),
                ),
            },
            other => ApiError::internal(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of each kind.
    fn every_kind() -> Vec<ApiError> {
        vec![
            ApiError::invalid("data", "is required"),
            ApiError::Unauthorized,
            ApiError::Forbidden(None),
            ApiError::NotFound(None),
            ApiError::MethodNotAllowed,
            ApiError::Conflict("why".into()),
            ApiError::PayloadTooLarge,
            ApiError::UnsupportedMediaType("send JSON"),
            ApiError::RequestTimeout,
            ApiError::Unavailable("busy"),
            ApiError::internal("cause"),
            ApiError::PreconditionFailed,
        ]
    }

    #[test]
    fn every_status_an_error_has_is_in_the_table_and_every_row_is_used() {
        let answered: Vec<StatusCode> = every_kind().iter().map(ApiError::status).collect();
        for status in &answered {
            assert!(
                STATUSES.iter().any(|(listed, _)| listed == status),
                "{status} is answered but not described"
            );
        }
        for (listed, _) in STATUSES {
            assert!(
                answered.contains(&listed),
                "{listed} is described but never answered"
            );
        }
    }

    #[test]
    fn the_description_lists_every_status_but_405() {
        let described: Vec<String> = Errors::responses().into_keys().collect();
        assert_eq!(described.len(), STATUSES.len() - 1);
        assert!(!described.contains(&"405".to_owned()));
    }
}
