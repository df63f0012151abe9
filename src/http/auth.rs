//! Bearer tokens (contract §5): checked before anything else, compared in
//! constant time, never logged. Read-only tokens may only read. `/healthz`
//! and reading the API explorer (`GET /docs`, its assets, and `/`) need
//! none.

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::ApiError;

/// What a presented token allows.
enum Access {
    ReadWrite,
    ReadOnly,
}

pub async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let config = &state.config;
    let path = req.uri().path();
    let reads = matches!(*req.method(), Method::GET | Method::HEAD);
    if !config.auth_required() || path == "/healthz" || reads && super::explorer::is_explorer(path)
    {
        return next.run(req).await;
    }
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    let access = presented.and_then(|token| {
        if config.tokens.iter().any(|t| same_secret(t, token)) {
            Some(Access::ReadWrite)
        } else if config.read_tokens.iter().any(|t| same_secret(t, token)) {
            Some(Access::ReadOnly)
        } else {
            None
        }
    });
    match access {
        None => ApiError::Unauthorized.into_response(),
        Some(Access::ReadOnly) if !matches!(*req.method(), Method::GET | Method::HEAD) => {
            ApiError::Forbidden.into_response()
        }
        Some(_) => next.run(req).await,
    }
}

/// The token of a `Bearer` credential; the scheme name is case-insensitive
/// (RFC 7235 §2.1), so `bearer x` counts.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

/// Compares two secrets in time that depends only on their lengths.
fn same_secret(expected: &str, presented: &str) -> bool {
    let (a, b) = (expected.as_bytes(), presented.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::{bearer_token, same_secret};

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearerabc"), None);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        assert!(!same_secret("abc", ""));
    }
}
