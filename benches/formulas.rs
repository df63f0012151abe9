//! Formula benchmark (issue 14): what recalculating formulas on every write
//! costs. It starts the release server on 127.0.0.1 and makes two
//! workbooks of `--rows` rows x 10 columns (the load benchmark's kinds of
//! text, numbers, dates and booleans) that differ only in their formulas:
//! - "plain": column 10 (`total`) holds numbers, and a sheet `Summary`
//!   holds four labelled numbers (sum, average, maximum and a count of the
//!   totals);
//! - "formulas": column 10 holds `=D{r}*G{r}` (amount x qty) in every row,
//!   and `Summary` holds `SUM`, `AVERAGE`, `MAX` and `COUNTIF` over the
//!   whole column, each with its cached result written (the same numbers
//!   as the plain workbook's).
//!
//! For each it measures, through HTTP:
//! - the cold load: the first `GET /v1/data/{id}/Data?limit=1` of a fresh
//!   copy under a new id (a cache miss, which parses the file), median of
//!   `--runs` copies, plain and formulas alternated;
//! - the first write: one `PATCH` `{"type":"row","row":R,"data":{"qty":n}}`
//!   on the cached workbook (for "formulas", the write that builds the
//!   formula engine);
//! - the p50 and p90 of the next `--updates` such writes, one at a time on
//!   random rows, plain and formulas alternated; `qty` is an input of the
//!   row's formula and, through it, of every formula of `Summary`.
//!
//! It then checks that the writes recalculated: the `Summary` values read
//! through the API and from the file on disk, and the updated rows' totals,
//! must equal what the benchmark computes from the values it wrote; and
//! the file must still hold the formulas. Otherwise it panics.
//!
//! `cargo bench --bench formulas` (about 15 seconds on 2 cores, once
//! built). Options after `--`: `--rows 10000`, `--updates 50`, `--runs 7`,
//! `--out FILE` (the Markdown table).

use std::collections::HashMap;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use calamine::{Data, Reader, Xlsx};
use rust_xlsxwriter::{Formula, Workbook};
use serde_json::{Value, json};

mod common;

#[path = "../tests/common/spawn.rs"]
mod spawn;
use spawn::spawn_sheetd;

/// 0-based indexes of `amount`, `qty` and `total` (D, G, J).
const AMOUNT: u16 = 3;
const QTY: u16 = 6;
const TOTAL: u16 = 9;
/// `Summary`'s `COUNTIF` counts the totals above this.
const THRESHOLD: f64 = 1000.0;

struct Options {
    rows: usize,
    updates: usize,
    runs: usize,
    out: Option<String>,
}

fn options() -> Options {
    let mut o = Options {
        rows: 10_000,
        updates: 50,
        runs: 7,
        out: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--rows" => o.rows = value.parse().expect("--rows takes a number"),
            "--updates" => o.updates = value.parse().expect("--updates takes a number"),
            "--runs" => o.runs = value.parse().expect("--runs takes a number"),
            "--out" => o.out = Some(value),
            _ => {
                i += 1; // cargo passes --bench; ignore what we do not know
                continue;
            }
        }
        i += 2;
    }
    assert!(
        o.rows >= 1 && o.updates >= 1 && o.runs >= 1,
        "each option takes at least 1"
    );
    o
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Plain,
    Formulas,
}

impl Kind {
    const BOTH: [Kind; 2] = [Kind::Plain, Kind::Formulas];

    fn name(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Formulas => "formulas",
        }
    }
}

/// The values of the `Data` sheet that the formulas read, kept in step with
/// the writes the benchmark sends.
#[derive(Clone)]
struct Model {
    amount: Vec<f64>,
    qty: Vec<f64>,
}

impl Model {
    fn new(rows: usize) -> Model {
        Model {
            amount: (0..rows).map(|i| i as f64 * 1.25).collect(),
            qty: (0..rows).map(|i| (i % 97) as f64).collect(),
        }
    }

    /// Row `i`'s total. Amounts are multiples of 1/4 and quantities whole,
    /// so every total and every sum of them is exact in an f64.
    fn total(&self, i: usize) -> f64 {
        self.amount[i] * self.qty[i]
    }

    /// `Summary`'s labels and values, in its row order.
    fn summary(&self) -> [(&'static str, f64); 4] {
        let totals: Vec<f64> = (0..self.amount.len()).map(|i| self.total(i)).collect();
        let sum: f64 = totals.iter().sum();
        let max = totals.iter().copied().fold(f64::MIN, f64::max);
        let count = totals.iter().filter(|&&t| t > THRESHOLD).count() as f64;
        [
            ("sum", sum),
            ("average", sum / totals.len() as f64),
            ("max", max),
            ("count over 1000", count),
        ]
    }
}

/// The workbook of `kind`: `Data` as the load benchmark's, with `total`
/// (column J) a plain number or `=D{r}*G{r}`, and `Summary`.
fn write_workbook(model: &Model, kind: Kind) -> Vec<u8> {
    let rows = model.amount.len();
    let mut book = Workbook::new();
    common::data_sheet(&mut book, rows, |sheet, r, c| {
        let i = (r as usize).wrapping_sub(1);
        match (r, c) {
            (0, TOTAL) => sheet.write_string(r, c, "total"),
            (0, _) => return false,
            (_, AMOUNT) => sheet.write_number(r, c, model.amount[i]),
            (_, QTY) => sheet.write_number(r, c, model.qty[i]),
            (_, TOTAL) => match kind {
                Kind::Plain => sheet.write_number(r, c, model.total(i)),
                Kind::Formulas => {
                    let formula = Formula::new(format!("=D{0}*G{0}", r + 1))
                        .set_result(model.total(i).to_string());
                    sheet.write_formula(r, c, formula)
                }
            },
            _ => return false,
        }
        .unwrap();
        true
    });
    let range = format!("Data!J2:J{}", rows + 1);
    let formulas = [
        format!("=SUM({range})"),
        format!("=AVERAGE({range})"),
        format!("=MAX({range})"),
        format!("=COUNTIF({range},\">{THRESHOLD}\")"),
    ];
    let summary = book.add_worksheet().set_name("Summary").unwrap();
    summary.write_string(0, 0, "label").unwrap();
    summary.write_string(0, 1, "value").unwrap();
    for (k, ((label, value), formula)) in model.summary().into_iter().zip(formulas).enumerate() {
        let r = k as u32 + 1;
        summary.write_string(r, 0, label).unwrap();
        match kind {
            Kind::Plain => summary.write_number(r, 1, value).unwrap(),
            Kind::Formulas => summary
                .write_formula(r, 1, Formula::new(formula).set_result(value.to_string()))
                .unwrap(),
        };
    }
    book.save_to_buffer().unwrap()
}

struct Server {
    child: Child,
    base: String,
    dir: tempfile::TempDir,
    client: reqwest::Client,
    next_id: u64,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let (child, base) = spawn_sheetd(dir.path(), &[]);
        Server {
            child,
            base,
            dir,
            client: reqwest::Client::new(),
            next_id: 1,
        }
    }

    /// Puts `file` in the data directory under a new id, which is served at once.
    fn add(&mut self, file: &[u8]) -> String {
        let id = format!("f0e10000-0000-4000-8000-{:012x}", self.next_id);
        self.next_id += 1;
        write(&self.dir.path().join(format!("{id}.xlsx")), file);
        id
    }

    fn path(&self, id: &str) -> std::path::PathBuf {
        self.dir.path().join(format!("{id}.xlsx"))
    }

    /// Sends `request`, checks its status and returns the JSON body (if
    /// any) and the time from sending to the last byte of the answer.
    async fn send(&self, request: reqwest::RequestBuilder, what: &str) -> (Value, Duration) {
        let sent = Instant::now();
        let response = request.send().await.expect("request sent");
        let status = response.status();
        let body = response.bytes().await.expect("answer read");
        let elapsed = sent.elapsed();
        assert!(
            status.is_success(),
            "{what} answered {status}: {}",
            String::from_utf8_lossy(&body)
        );
        let json = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).expect("a JSON answer")
        };
        (json, elapsed)
    }

    async fn get(&self, path: &str) -> (Value, Duration) {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request, &format!("GET {path}")).await
    }

    /// Sets `qty` of data row `i` (0-based; spreadsheet row `i + 2`).
    async fn update(&self, id: &str, i: usize, qty: f64) -> Duration {
        let body = json!({"type": "row", "row": i + 2, "data": {"qty": qty}});
        let request = self
            .client
            .patch(format!("{}/v1/data/{id}/Data", self.base))
            .json(&body);
        let (answer, elapsed) = self.send(request, "PATCH").await;
        assert_eq!(answer, json!({"updated": 1}), "the update of row {}", i + 2);
        elapsed
    }

    async fn remove(&self, id: &str) {
        let request = self
            .client
            .delete(format!("{}/v1/spreadsheets/{id}", self.base));
        self.send(request, "DELETE").await;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// A small deterministic generator (xorshift64*), so both workbooks get the
/// same rows and values in the same order.
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn number(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

/// Whether two values the workbook computed agree: exactly, but for the
/// average, which is a quotient.
fn agrees(label: &str, got: f64, expected: f64) -> bool {
    if label == "average" {
        (got - expected).abs() <= expected.abs() * 1e-12
    } else {
        got == expected
    }
}

/// Checks, through the API and in the file, that `Summary` and the updated
/// rows hold what `model` gives: for "formulas" the recomputed results, for
/// "plain" the numbers first written (and the new quantities).
async fn check(
    server: &Server,
    id: &str,
    kind: Kind,
    model: &Model,
    first: &Model,
    touched: &[usize],
) {
    let what = kind.name();
    let expected = match kind {
        Kind::Formulas => model.summary(),
        Kind::Plain => first.summary(),
    };
    // Through the API.
    let (body, _) = server.get(&format!("/v1/data/{id}/Summary")).await;
    let served: HashMap<String, Value> = body["data"]
        .as_array()
        .expect("Summary's rows")
        .iter()
        .map(|row| {
            (
                row["label"].as_str().expect("a label").to_owned(),
                row["value"].clone(),
            )
        })
        .collect();
    for (label, value) in expected {
        let got = number(&served[label], &format!("{what}: Summary's {label}"));
        assert!(
            agrees(label, got, value),
            "{what}: Summary's {label} reads {got} through the API, but the data written give \
             {value}; the writes did not recalculate"
        );
    }
    for &i in touched {
        let (body, _) = server
            .get(&format!("/v1/data/{id}/Data?filter=id:eq:{i}"))
            .await;
        let row = &body["data"][0];
        assert_eq!(
            number(&row["qty"], "qty"),
            model.qty[i],
            "{what}: qty of row {}",
            i + 2
        );
        if kind == Kind::Formulas {
            let total = number(&row["total"], "total");
            assert_eq!(
                total,
                model.total(i),
                "{what}: total of row {} not recalculated",
                i + 2
            );
        }
    }
    // In the file on disk: cached values, and the formulas still there.
    let bytes = std::fs::read(server.path(id)).unwrap();
    let mut book = Xlsx::new(std::io::Cursor::new(bytes)).expect("the written file opens");
    let summary = book.worksheet_range("Summary").expect("Summary on disk");
    for (k, (label, value)) in expected.into_iter().enumerate() {
        let got = match summary.get_value((k as u32 + 1, 1)) {
            Some(Data::Float(f)) => *f,
            Some(Data::Int(n)) => *n as f64,
            other => panic!("{what}: Summary's {label} on disk is {other:?}"),
        };
        assert!(
            agrees(label, got, value),
            "{what}: Summary's {label} on disk is {got}, expected {value}"
        );
    }
    if kind == Kind::Formulas {
        let data = book.worksheet_range("Data").expect("Data on disk");
        let formulas = book.worksheet_formula("Data").expect("Data's formulas");
        let summary_formulas = book
            .worksheet_formula("Summary")
            .expect("Summary's formulas");
        for &i in touched {
            let r = i as u32 + 1;
            let on_disk = data.get_value((r, TOTAL as u32));
            assert_eq!(
                on_disk,
                Some(&Data::Float(model.total(i))),
                "{what}: total of row {} on disk",
                r + 1
            );
            let formula = formulas.get_value((r, TOTAL as u32));
            let formula = formula.map(String::as_str).unwrap_or("");
            assert_eq!(
                formula,
                format!("D{0}*G{0}", r + 1),
                "{what}: formula of row {} on disk",
                r + 1
            );
        }
        let sum = summary_formulas.get_value((1, 1));
        assert!(
            sum.is_some_and(|f| f.starts_with("SUM(")),
            "{what}: Summary!B2 lost its formula: {sum:?}"
        );
    }
}

#[tokio::main]
async fn main() {
    let options = options();
    let started = Instant::now();
    let first = Model::new(options.rows);
    let files: Vec<Vec<u8>> = Kind::BOTH
        .iter()
        .map(|&k| write_workbook(&first, k))
        .collect();
    let mut server = Server::start();
    eprintln!(
        "{} rows: plain {} KiB, formulas {} KiB",
        options.rows,
        files[0].len() / 1024,
        files[1].len() / 1024
    );

    // Cold loads: a fresh copy under a new id for each, alternated.
    let mut cold: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for run in 0..options.runs {
        for (k, kind) in Kind::BOTH.into_iter().enumerate() {
            let id = server.add(&files[k]);
            let (body, elapsed) = server.get(&format!("/v1/data/{id}/Data?limit=1")).await;
            assert_eq!(
                body["total"],
                json!(options.rows),
                "{}: the rows served",
                kind.name()
            );
            eprintln!(
                "cold load {} #{}: {:.1} ms",
                kind.name(),
                run + 1,
                ms(elapsed)
            );
            cold[k].push(elapsed);
            server.remove(&id).await;
        }
    }

    // Writes: one copy each, cached by a first read; the same rows and
    // values for both, alternated.
    let ids: Vec<String> = files.iter().map(|file| server.add(file)).collect();
    for id in &ids {
        server.get(&format!("/v1/data/{id}/Data?limit=1")).await;
    }
    let mut model = first.clone();
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let mut first_write = [Duration::ZERO; 2];
    let mut updates: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut touched = Vec::new();
    for n in 0..=options.updates {
        let i = random.below(options.rows);
        let mut qty = random.below(1000) as f64;
        if qty == model.qty[i] {
            qty += 1.0; // a real change, so there is something to recompute
        }
        model.qty[i] = qty;
        touched.push(i);
        for (k, id) in ids.iter().enumerate() {
            let elapsed = server.update(id, i, qty).await;
            if n == 0 {
                first_write[k] = elapsed;
                eprintln!(
                    "first write {}: {:.1} ms",
                    Kind::BOTH[k].name(),
                    ms(elapsed)
                );
            } else {
                updates[k].push(elapsed);
            }
        }
    }
    touched.sort_unstable();
    touched.dedup();
    assert_ne!(
        model.summary()[0].1,
        first.summary()[0].1,
        "the updates must change the sum, or the check below proves nothing"
    );
    for (k, kind) in Kind::BOTH.into_iter().enumerate() {
        check(&server, &ids[k], kind, &model, &first, &touched).await;
    }
    eprintln!("checked: Summary and the updated rows hold the recomputed values");

    let cold: Vec<Duration> = cold.into_iter().map(median).collect();
    for times in &mut updates {
        times.sort();
    }
    let p = |k: usize, q: f64| percentile(&updates[k], q);
    let lines = [
        (
            format!("cold load (median of {})", options.runs),
            cold[0],
            cold[1],
        ),
        ("first write".to_owned(), first_write[0], first_write[1]),
        (
            format!("update p50 ({} writes)", options.updates),
            p(0, 0.5),
            p(1, 0.5),
        ),
        (
            format!("update p90 ({} writes)", options.updates),
            p(0, 0.9),
            p(1, 0.9),
        ),
    ];
    let mut table = format!(
        "{} rows x 10 columns, Summary of 4 formulas; times in ms\n\n\
         | | plain | formulas | formulas / plain |\n|---|---:|---:|---:|\n",
        options.rows
    );
    for (name, plain, formulas) in &lines {
        table.push_str(&format!(
            "| {name} | {:.1} | {:.1} | {:.2} |\n",
            ms(*plain),
            ms(*formulas),
            formulas.as_secs_f64() / plain.as_secs_f64()
        ));
    }
    let ratio = |(_, plain, formulas): &(String, Duration, Duration)| {
        formulas.as_secs_f64() / plain.as_secs_f64()
    };
    let (update, load) = (ratio(&lines[2]), ratio(&lines[0]));
    table.push_str(&format!(
        "\nIssue 14 targets: update p50 within 1.3x: {:.2} ({}); cold load within 2x: {:.2} ({})\n",
        update,
        if update <= 1.3 { "met" } else { "NOT met" },
        load,
        if load <= 2.0 { "met" } else { "NOT met" },
    ));
    println!("\n{table}");
    eprintln!("took {:.0} s", started.elapsed().as_secs_f64());
    if let Some(path) = options.out {
        std::fs::write(path, table).unwrap();
    }
}
