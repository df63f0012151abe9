//! Answers to reads (§4.3, §10.1), made as they are sent: a page of rows
//! becomes JSON or CSV a chunk at a time, when the connection asks for more. hyper asks only once the socket
//! has taken what it was given, so a client that reads slowly (or not at
//! all) holds one chunk, not the whole answer; every reader of a workbook
//! version shares that version.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};

use crate::model::Workbook;
use crate::model::render::{Renderer, Rendering};
use crate::model::request::Format;
use crate::model::sheet::RowsPage;

/// A chunk is sent once it holds about this many bytes.
const CHUNK_BYTES: usize = 64 * 1024;

/// `{"data": [rows…], "total": T}`, or CSV: a line of column names, then a
/// line per row (RFC 4180), made row by row.
struct Rows {
    workbook: Arc<Workbook>,
    sheet: usize,
    page: RowsPage,
    format: Format,
    /// Shows each cell as the read asks (§11.3).
    renderer: Renderer,
    /// The next row of the page to write.
    next: usize,
    started: bool,
    done: bool,
}

pub(super) const TOTAL_COUNT: HeaderName = HeaderName::from_static("x-total-count");

/// Where a read stands in its paging: for the `Link` to the next page.
pub struct NextPage {
    /// The request's path, and its query as pairs.
    pub path: String,
    pub query: Vec<(String, String)>,
    pub offset: usize,
    pub limit: usize,
}

/// The answer to a read: `page` of the workbook's sheet at `sheet`,
/// streamed in `format`, with `X-Total-Count` and, when rows remain past
/// this page, `Link: <…>; rel="next"`; cells shown as `rendering` says.
pub fn answer(
    workbook: Arc<Workbook>,
    sheet: usize,
    page: RowsPage,
    (format, rendering): (Format, Rendering),
    paging: &NextPage,
) -> Response {
    let content_type = match format {
        Format::Json => "application/json",
        Format::Csv => "text/csv; charset=utf-8",
    };
    let total = page.total;
    let mut response = rows(workbook, sheet, page, format, rendering).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // The format may follow `Accept`: caches keep the two apart.
    headers.append(header::VARY, HeaderValue::from_static("accept"));
    headers.insert(TOTAL_COUNT, HeaderValue::from(total));
    if let Some(link) = paging.link(total) {
        headers.insert(header::LINK, link);
    }
    response
}

/// CSV when the client's `Accept` prefers `text/csv` (§10.1) to JSON,
/// else JSON. Each type takes the quality of the most specific range that
/// matches it (RFC 9110 §12.5.1: `text/csv` before `text/*` before `*/*`),
/// so `text/csv;q=0` refuses CSV; at equal quality, CSV when it is named.
pub fn accepted_format(headers: &HeaderMap) -> Format {
    // Per type: the quality of its exact range, its type's wildcard, `*/*`.
    let mut csv = [None, None, None];
    let mut json = [None, None, None];
    let ranges = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','));
    for range in ranges {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let quality = parts
            .filter_map(|p| {
                let (name, value) = p.split_once('=')?;
                name.trim()
                    .eq_ignore_ascii_case("q")
                    .then(|| value.trim().parse::<f32>().ok())?
            })
            .find(|q| (0.0..=1.0).contains(q))
            .unwrap_or(1.0);
        let slot = match media.as_str() {
            "text/csv" => &mut csv[0],
            "text/*" => &mut csv[1],
            "application/json" => &mut json[0],
            "application/*" => &mut json[1],
            "*/*" => {
                csv[2] = Some(quality);
                &mut json[2]
            }
            _ => continue,
        };
        *slot = Some(quality);
    }
    let specific = |qualities: [Option<f32>; 3]| qualities.into_iter().flatten().next();
    match (specific(csv), specific(json)) {
        (Some(c), Some(j)) if c > j || (c == j && c > 0.0 && csv[0].is_some()) => Format::Csv,
        (Some(c), None) if c > 0.0 => Format::Csv,
        _ => Format::Json,
    }
}

impl NextPage {
    /// `<path?query>; rel="next"` (RFC 8288), the same query with the next
    /// offset, when rows remain of the `total` matching; none after a
    /// `limit=0` read, which asks for the count only.
    fn link(&self, total: usize) -> Option<HeaderValue> {
        let next = self.offset.saturating_add(self.limit);
        if self.limit == 0 || next >= total {
            return None;
        }
        let mut query: Vec<(&str, String)> = self
            .query
            .iter()
            .filter(|(name, _)| name != "offset")
            .map(|(name, value)| (name.as_str(), value.clone()))
            .collect();
        query.push(("offset", next.to_string()));
        let query = serde_urlencoded::to_string(&query).unwrap_or_default();
        HeaderValue::from_str(&format!("<{}?{query}>; rel=\"next\"", self.path)).ok()
    }
}

/// The body of a rows answer for `page` of the workbook's sheet at `sheet`.
fn rows(
    workbook: Arc<Workbook>,
    sheet: usize,
    page: RowsPage,
    format: Format,
    rendering: Rendering,
) -> Body {
    Body::new(Rows {
        workbook,
        sheet,
        page,
        format,
        renderer: Renderer::new(rendering),
        next: 0,
        started: false,
        done: false,
    })
}

impl Rows {
    /// The next chunk: the opening, rows up to about [`CHUNK_BYTES`], and
    /// the closing once every row is written.
    fn chunk(&mut self) -> Vec<u8> {
        let mut out = Vec::with_capacity(CHUNK_BYTES + 1024);
        if !self.started {
            self.started = true;
            match self.format {
                Format::Json => out.extend_from_slice(b"{\"data\":["),
                // A sheet without a header has no line of names to give.
                Format::Csv if self.page.columns.is_empty() => {}
                Format::Csv => {
                    let names = self.page.columns.iter().map(|c| c.name.as_str());
                    csv_line(&mut out, names);
                }
            }
        }
        let sheet = &self.workbook.sheets[self.sheet];
        while out.len() < CHUNK_BYTES
            && let Some(&index) = self.page.rows.get(self.next)
        {
            match self.format {
                Format::Json => {
                    if self.next > 0 {
                        out.push(b',');
                    }
                    let row =
                        self.renderer
                            .row_json(&self.workbook, sheet, index, &self.page.columns);
                    // Writing a JSON value into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut out, &row);
                }
                Format::Csv => {
                    // Each value as JSON gives it, without the row's object.
                    let values: Vec<String> = self
                        .page
                        .columns
                        .iter()
                        .map(|c| {
                            csv_value(&self.renderer.cell_json(
                                &self.workbook,
                                sheet,
                                index,
                                c.index,
                            ))
                        })
                        .collect();
                    csv_line(&mut out, values.iter().map(String::as_str));
                }
            }
            self.next += 1;
        }
        if self.next == self.page.rows.len() {
            if self.format == Format::Json {
                out.extend_from_slice(format!("],\"total\":{}}}", self.page.total).as_bytes());
            }
            self.done = true;
        }
        out
    }
}

/// A value as CSV shows it: as in JSON, text without quotes, empty for null.
fn csv_value(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One CSV line (RFC 4180): fields separated by commas, quoted (quotes
/// doubled) when they hold a comma, a quote or a line break, ended by CRLF.
fn csv_line<'a>(out: &mut Vec<u8>, fields: impl Iterator<Item = &'a str>) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if field.contains([',', '"', '\r', '\n']) {
            out.push(b'"');
            out.extend_from_slice(field.replace('"', "\"\"").as_bytes());
            out.push(b'"');
        } else {
            out.extend_from_slice(field.as_bytes());
        }
    }
    out.extend_from_slice(b"\r\n");
}

impl http_body::Body for Rows {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(self.chunk())))))
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::request::ReadQuery;
    use crate::model::{Cell, Sheet};
    use http_body_util::BodyExt;

    fn format_for(accept: &str) -> Format {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        accepted_format(&headers)
    }

    #[test]
    fn accept_chooses_csv_by_quality() {
        for (accept, expected) in [
            ("text/csv", Format::Csv),
            ("TEXT/CSV; charset=utf-8", Format::Csv),
            ("application/json, text/csv", Format::Csv),
            ("text/csv, */*", Format::Csv),
            ("text/csv;q=0, application/json", Format::Json),
            ("text/csv;q=0", Format::Json),
            ("application/json;q=1, text/csv;q=0.5", Format::Json),
            ("application/json, text/csv;q=0.1", Format::Json),
            ("text/csv;q=0.9, */*;q=0.1", Format::Csv),
            ("text/csv;q=0.5, application/json;q=0.1, */*", Format::Csv),
            ("text/csv;Q=0, application/json", Format::Json),
            ("text/csv;q=NaN, application/json;q=0.5", Format::Csv),
            ("text/*", Format::Csv),
            ("text/*, application/json", Format::Json),
            ("*/*", Format::Json),
            ("text/html", Format::Json),
        ] {
            assert_eq!(format_for(accept), expected, "{accept}");
        }
    }

    fn workbook(rows: usize) -> Arc<Workbook> {
        let mut cells = vec![vec![Cell::Text("n".into()), Cell::Text("t".into())]];
        cells.extend((0..rows).map(|i| vec![Cell::Number(i as f64), Cell::Text("x".repeat(50))]));
        Arc::new(Workbook {
            sheets: vec![Sheet {
                name: "S".into(),
                rows: cells,
                ..Sheet::default()
            }],
            ..Workbook::default()
        })
    }

    async fn answer(data_rows: usize, limit: usize) -> (serde_json::Value, usize) {
        let workbook = workbook(data_rows);
        let query = ReadQuery::from_pairs(&[("limit".into(), limit.to_string())]).unwrap();
        let page = workbook.sheets[0]
            .read(&crate::model::header::Region::default(), &query)
            .unwrap();
        let mut body = rows(workbook, 0, page, Format::Json, Rendering::default());
        let mut bytes = Vec::new();
        let mut chunks = 0;
        while let Some(frame) = body.frame().await {
            bytes.extend_from_slice(&frame.unwrap().into_data().unwrap());
            chunks += 1;
        }
        (serde_json::from_slice(&bytes).unwrap(), chunks)
    }

    #[tokio::test]
    async fn a_large_page_is_sent_in_chunks_and_reads_as_one_answer() {
        let (json, chunks) = answer(5_000, 4_000).await;
        assert_eq!(json["total"], 5_000);
        let data = json["data"].as_array().unwrap();
        assert_eq!(data.len(), 4_000);
        assert_eq!(data[0]["_row"], 2);
        assert_eq!(data[3_999]["n"], 3_999);
        // About 90 bytes a row: 360 KB in chunks of about 64 KiB.
        assert!(chunks >= 5, "{chunks} chunks");
    }

    #[test]
    fn csv_fields_are_quoted_only_when_they_must_be() {
        let mut out = Vec::new();
        csv_line(
            &mut out,
            ["plain", "a,b", "say \"hi\"", "two\nlines", ""].into_iter(),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\r\n"
        );
    }

    #[tokio::test]
    async fn an_empty_page_is_one_chunk() {
        let (json, chunks) = answer(3, 0).await;
        assert_eq!(json, serde_json::json!({"data": [], "total": 3}));
        assert_eq!(chunks, 1);
    }
}
