//! The audit log (contract §11.7, `--audit-log FILE`): one JSON line per
//! write request, refused ones included, appended before the answer is
//! sent. Lines are written whole under a lock, so concurrent writes never
//! interleave; the file is opened again on SIGHUP, for log rotation.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde::Serialize;
use serde_json::{Map, Value};

use super::auth::percent_decoded;
use super::{AppState, REQUEST_ID};
use crate::model::SpreadsheetId;

/// Longest answer body read for its counts; write answers are far smaller.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The open log file.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<File>,
}

/// The name of the token a request came with, put in the answer's
/// extensions by the authentication layer.
#[derive(Debug, Clone)]
pub struct TokenName(pub String);

/// One line of the log.
#[derive(Serialize)]
struct Line<'a> {
    time: String,
    token: Option<&'a str>,
    request_id: Option<&'a str>,
    method: &'a str,
    spreadsheet: Option<&'a str>,
    sheet: Option<String>,
    operation: &'static str,
    /// The counts the answer gives (`inserted`, `updated`, `deleted`; a
    /// batch's summed over its operations).
    rows: Map<String, Value>,
    status: u16,
    etag_before: Option<&'a str>,
    etag_after: Option<&'a str>,
}

impl AuditLog {
    /// Opens `path` for appending, creating it if needed.
    pub fn open(path: &Path) -> std::io::Result<AuditLog> {
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new(append(path)?),
        })
    }

    /// Opens the file again (after a rotation moved it away).
    pub fn reopen(&self) {
        match append(&self.path) {
            Ok(file) => *self.file.lock().unwrap_or_else(|e| e.into_inner()) = file,
            Err(e) => tracing::error!(error = %e, "the audit log could not be opened again"),
        }
    }

    /// Opens the file again on each SIGHUP.
    pub fn reopen_on_hangup(self: &Arc<Self>) {
        let log = self.clone();
        tokio::spawn(async move {
            let Ok(mut hangups) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            else {
                return;
            };
            while hangups.recv().await.is_some() {
                log.reopen();
            }
        });
    }

    /// Appends `line` and a newline, in one write under the lock. Blocks:
    /// call it off the async runtime.
    fn append_line(&self, mut line: Vec<u8>) {
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(&line) {
            tracing::error!(error = %e, "an audit line could not be written");
        }
    }
}

fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// Logs every write request with its answer, before sending the answer.
pub async fn record(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(log) = state.audit.clone() else {
        return next.run(req).await;
    };
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if matches!(method, Method::GET | Method::HEAD | Method::OPTIONS) || !path.starts_with("/v1/") {
        return next.run(req).await;
    }
    let decoded: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(percent_decoded)
        .collect();
    let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();
    // The version the write finds (a file sheetd has not read is hashed
    // once for it, as a read would hash it).
    let workbook = segments.get(2).and_then(|id| SpreadsheetId::parse(id).ok());
    let before = match workbook {
        Some(id) => {
            let store = state.store.clone();
            tokio::task::spawn_blocking(move || store.current_etag(id))
                .await
                .ok()
                .flatten()
        }
        None => None,
    };
    let response = next.run(req).await;
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_ANSWER_BYTES)
        .await
        .unwrap_or_default();
    let token = parts.extensions.get::<TokenName>().map(|t| t.0.as_str());
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    // An upload's workbook and an added sheet are named by the answer, not
    // the path.
    let answer = serde_json::from_slice::<Value>(&bytes).ok();
    let answered = |key: &str| {
        let text = answer.as_ref()?.get(key)?.as_str()?;
        parts.status.is_success().then(|| text.to_owned())
    };
    let created = answered("spreadsheet_id");
    let line = serde_json::to_vec(&Line {
        time: super::spreadsheets::rfc3339_millis(SystemTime::now()),
        token,
        request_id: request_id.as_deref(),
        method: method.as_str(),
        spreadsheet: (segments.get(2).copied().filter(|s| !s.is_empty())).or(created.as_deref()),
        // Only the data routes name a sheet (`/v1/spreadsheets/{id}/versions`
        // names none).
        sheet: match (segments.get(1), segments.get(3)) {
            (Some(&"data"), Some(sheet)) => Some((*sheet).to_owned()),
            (Some(&"data"), None) => answered("name"),
            _ => None,
        },
        operation: operation(&method, &segments, &query),
        rows: counts(parts.status, answer.as_ref()),
        status: parts.status.as_u16(),
        etag_before: before.as_deref(),
        etag_after: header("etag").filter(|_| parts.status.is_success()),
    });
    if let Ok(line) = line {
        // The file write, like every file write, off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || log.append_line(line)).await;
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// What a write request does, by its route.
fn operation(method: &Method, segments: &[&str], query: &str) -> &'static str {
    let upsert = super::auth::names_upsert(Some(query).filter(|q| !q.is_empty()));
    match (method, segments) {
        (&Method::POST, ["v1", "data", _, _]) if upsert => "upsert",
        (&Method::POST, ["v1", "data", _, _]) => "insert",
        (&Method::PATCH, ["v1", "data", _, _]) => "update",
        (&Method::DELETE, ["v1", "data", _, _]) => "delete",
        (&Method::POST, ["v1", "data", _]) => "add_sheet",
        (&Method::POST, ["v1", "batch", _]) => "batch",
        (&Method::POST, ["v1", "spreadsheets"]) => "upload",
        (&Method::PUT, ["v1", "spreadsheets", _]) => "replace",
        (&Method::DELETE, ["v1", "spreadsheets", _]) => "remove",
        (&Method::POST, ["v1", "spreadsheets", _, "versions", _, "restore"]) => "restore",
        _ => "other",
    }
}

/// The row counts of a successful answer, a batch's summed by kind.
fn counts(status: StatusCode, answer: Option<&Value>) -> Map<String, Value> {
    let mut counts = Map::new();
    if !status.is_success() {
        return counts;
    }
    let Some(Value::Object(answer)) = answer else {
        return counts;
    };
    let answers: Vec<&Map<String, Value>> = match answer.get("results") {
        Some(Value::Array(results)) => results.iter().filter_map(Value::as_object).collect(),
        _ => vec![&answer],
    };
    for answer in answers {
        for kind in ["inserted", "updated", "deleted"] {
            if let Some(n) = answer.get(kind).and_then(Value::as_u64) {
                let sum = counts.get(kind).and_then(Value::as_u64).unwrap_or(0) + n;
                counts.insert(kind.into(), sum.into());
            }
        }
    }
    counts
}
