//! Bearer tokens (contract §5, §11.7): checked before anything else,
//! compared by their hashes in constant time, never logged. `/healthz` and
//! reading the API explorer (`GET /docs`, its assets, and `/`) need none.
//!
//! A token reaches some workbooks (a workbook beyond its reach is answered
//! 404, as if absent), optionally only some of their sheets or tables (403
//! for another), and may do some things there (403 naming the permission
//! it lacks). The route decides what a request needs ([`needs`]); a batch
//! checks its operations itself, and listings leave out what the token
//! does not reach, with the [`Grant`] this layer puts in the request.

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::audit::TokenName;
use super::error::ApiError;
use crate::access::{Grant, Permission, Presented};
use crate::model::SpreadsheetId;

pub async fn require_token(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let reads = matches!(*req.method(), Method::GET | Method::HEAD);
    if !state.keyring.required()
        || path == "/healthz"
        || reads && super::explorer::is_explorer(path)
    {
        return next.run(req).await;
    }
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    let grant = match presented.map(|secret| state.keyring.find(secret)) {
        Some(Presented::Valid(grant)) => grant,
        Some(Presented::Expired) => return ApiError::Unauthorized.into_response(),
        Some(Presented::Unknown) | None => return ApiError::Unauthorized.into_response(),
    };
    let name = TokenName(grant.name.clone());
    let mut response = match allowed(&grant, &needs(req.method(), req.uri())) {
        Err(refused) => refused.into_response(),
        Ok(()) => {
            req.extensions_mut().insert(grant);
            next.run(req).await
        }
    };
    // For the audit log.
    response.extensions_mut().insert(name);
    response
}

/// What a request needs of its token.
#[derive(Debug, Default, PartialEq)]
pub struct Need {
    /// The workbook the path names, if it names a valid id.
    pub spreadsheet: Option<SpreadsheetId>,
    /// The sheet or table the path names, percent-decoded.
    pub sheet: Option<String>,
    pub permissions: Vec<Permission>,
    /// The request reads or replaces a workbook whole.
    pub whole_workbook: bool,
    /// The request makes a workbook under a new id.
    pub creates: bool,
}

/// What a request needs, by its route. Paths no route has need only a
/// valid token (they answer 404).
fn needs(method: &Method, uri: &axum::http::Uri) -> Need {
    // Decoded as the router decodes them: `%35…` names the workbook `5…`.
    let decoded: Vec<String> = uri
        .path()
        .trim_start_matches('/')
        .split('/')
        .map(percent_decoded)
        .collect();
    let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();
    let id = |segment: &str| SpreadsheetId::parse(segment).ok();
    let read = *method == Method::GET || *method == Method::HEAD;
    match segments.as_slice() {
        ["v1", "data", workbook, sheet] => {
            let mut permissions = vec![match *method {
                Method::POST => Permission::Insert,
                Method::PATCH => Permission::Update,
                Method::DELETE => Permission::Delete,
                _ => Permission::Read,
            }];
            if *method == Method::POST && names_upsert(uri.query()) {
                permissions.push(Permission::Update);
            }
            Need {
                spreadsheet: id(workbook),
                sheet: Some((*sheet).to_owned()),
                permissions,
                ..Need::default()
            }
        }
        ["v1", "data", workbook] => Need {
            spreadsheet: id(workbook),
            permissions: vec![if read {
                Permission::Read
            } else {
                Permission::Manage
            }],
            ..Need::default()
        },
        // Each operation is checked by the batch itself.
        ["v1", "batch", workbook] => Need {
            spreadsheet: id(workbook),
            ..Need::default()
        },
        ["v1", "spreadsheets"] => Need {
            permissions: vec![if read {
                Permission::Read
            } else {
                Permission::Manage
            }],
            creates: !read,
            ..Need::default()
        },
        ["v1", "spreadsheets", workbook, ..] => Need {
            spreadsheet: id(workbook),
            permissions: vec![if read {
                Permission::Read
            } else {
                Permission::Manage
            }],
            whole_workbook: true,
            ..Need::default()
        },
        _ => Need::default(),
    }
}

/// Whether `grant` allows what a request needs: a workbook beyond its
/// reach is 404 (as if absent), anything else it may not do 403.
fn allowed(grant: &Grant, need: &Need) -> Result<(), ApiError> {
    if need.spreadsheet.is_some_and(|id| !grant.reaches(id)) {
        return Err(ApiError::NotFound(Some(
            "no spreadsheet has that id".into(),
        )));
    }
    if let Some(sheet) = need.sheet.as_ref().filter(|s| !grant.reaches_sheet(s)) {
        return Err(not_reached(grant, sheet));
    }
    if need.creates && !grant.reaches_every_workbook() {
        return Err(ApiError::Forbidden(Some(format!(
            "the token {:?} reaches only the workbooks it lists, and a workbook it made \
             would have a new id beyond its reach",
            grant.name
        ))));
    }
    if need.whole_workbook && !grant.reaches_whole_workbooks() {
        return Err(ApiError::Forbidden(Some(format!(
            "the token {:?} reaches only some sheets of a workbook, not the whole workbook",
            grant.name
        ))));
    }
    match need.permissions.iter().find(|p| !grant.may(**p)) {
        Some(lacking) => Err(lacks(grant, *lacking)),
        None => Ok(()),
    }
}

/// The 403 of a token without `permission`.
pub fn lacks(grant: &Grant, permission: Permission) -> ApiError {
    ApiError::Forbidden(Some(format!(
        "the token {:?} lacks the permission {:?} (it may: {})",
        grant.name,
        permission.name(),
        grant.permissions().join(" | ")
    )))
}

/// A token that reaches only some sheets may not write formulas: a
/// formula reads any sheet of its workbook (`=Secret!B2`, `INDIRECT`), so
/// it would read what the token does not reach.
pub fn may_write_formulas(grant: Option<&Grant>, writes_formulas: bool) -> Result<(), ApiError> {
    match grant {
        Some(grant) if writes_formulas && !grant.reaches_whole_workbooks() => {
            Err(ApiError::Forbidden(Some(format!(
                "the token {:?} reaches only some sheets, and a formula may read any sheet: \
                 it cannot write formulas",
                grant.name
            ))))
        }
        _ => Ok(()),
    }
}

/// The 403 of a token that does not reach a sheet or table.
pub fn not_reached(grant: &Grant, sheet: &str) -> ApiError {
    ApiError::Forbidden(Some(format!(
        "the token {:?} does not reach the sheet or table {sheet:?}",
        grant.name
    )))
}

/// Why a delete whose sheet rows hold rows of the table `table`, which
/// the token does not reach, is refused (a 403).
pub fn deletes_beside(grant: &Grant, table: &str) -> String {
    format!(
        "the rows to delete also hold rows of the table {table:?}, which the token {:?} does not reach (a delete takes whole sheet rows)",
        grant.name
    )
}

/// Whether a query asks for an upsert (`on_conflict`, its name decoded as
/// the handler decodes it: `on%5Fconflict` counts). A query that does not
/// decode counts too: it is refused later, and never as a mere insert.
pub(super) fn names_upsert(query: Option<&str>) -> bool {
    let Some(query) = query else { return false };
    match serde_urlencoded::from_str::<Vec<(String, String)>>(query) {
        Ok(pairs) => pairs.iter().any(|(name, _)| name == "on_conflict"),
        Err(_) => true,
    }
}

/// `%XX` sequences decoded, as the router decodes a path segment; a segment
/// that does not decode to UTF-8 is kept as sent (it names no sheet).
pub(super) fn percent_decoded(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .map_or_else(|_| segment.to_owned(), std::borrow::Cow::into_owned)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn each_route_needs_its_permission() {
        let id = "0b1e3a5c-7d2f-4a8e-9c61-3f0d2b7e4a19";
        let need = |method: Method, uri: &str| needs(&method, &uri.parse().unwrap());
        let rows = format!("/v1/data/{id}/Q%203");
        assert_eq!(need(Method::GET, &rows).permissions, [Permission::Read]);
        assert_eq!(need(Method::GET, &rows).sheet.as_deref(), Some("Q 3"));
        assert_eq!(
            need(Method::POST, &format!("{rows}?on_conflict=name")).permissions,
            [Permission::Insert, Permission::Update]
        );
        assert_eq!(need(Method::PATCH, &rows).permissions, [Permission::Update]);
        assert_eq!(
            need(Method::DELETE, &rows).permissions,
            [Permission::Delete]
        );
        assert_eq!(
            need(Method::POST, &format!("/v1/data/{id}")).permissions,
            [Permission::Manage]
        );
        let download = need(Method::GET, &format!("/v1/spreadsheets/{id}"));
        assert!(download.whole_workbook && download.permissions == [Permission::Read]);
        assert_eq!(
            need(Method::PUT, &format!("/v1/spreadsheets/{id}")).permissions,
            [Permission::Manage]
        );
        assert!(
            need(Method::POST, &format!("/v1/batch/{id}"))
                .permissions
                .is_empty()
        );
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decoded("Q%203%25"), "Q 3%");
        assert_eq!(percent_decoded("a%2"), "a%2");
        assert_eq!(percent_decoded("%C3%A9t%C3%A9"), "été");
    }
}
