//! Load benchmark: starts the release server on 127.0.0.1, makes workbooks
//! of 1k / 10k / 100k rows x 10 columns, and measures single-row insert,
//! 100-row insert, update by filter (one match) and filtered read (one
//! match) at 1, 8 and 64 concurrent clients. Beside each result it reports
//! the floor: the time rust_xlsxwriter alone takes to write the same
//! workbook in the same run, and the ratio of the p50 to it.
//!
//! Beside the p50 it reports the server's CPU time per request (user and
//! system time from /proc/<pid>/stat over the cell, divided by requests).
//!
//! `cargo bench --bench load` (about 6 minutes on 2 cores). Options after
//! `--`: `--sizes 1000,10000`, `--clients 1,8`, `--seconds 3` (per cell),
//! `--ops read,update,insert1,insert100,delete`, `--out FILE` (the Markdown
//! table), `--keep-versions N` (the server's flag; its default, 10, when not
//! given), `--producer rust_xlsxwriter|openpyxl|libreoffice|all` (which
//! program saved the workbook, default rust_xlsxwriter: the others are made
//! by `benches/producers/make.py` into `target/bench-producers/`, which needs
//! python3 with openpyxl, and LibreOffice's `soffice` for `libreoffice`).

use std::path::Path;
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
#[path = "../tests/common/spawn.rs"]
mod spawn;
use common::{Producer, write_workbook};
use spawn::spawn_sheetd;

const ID: &str = "be4c0000-0000-4000-8000-000000000001";
struct Options {
    sizes: Vec<usize>,
    clients: Vec<usize>,
    seconds: f64,
    ops: Vec<Op>,
    out: Option<String>,
    keep_versions: Option<String>,
    producers: Vec<Producer>,
}

fn options() -> Options {
    let mut o = Options {
        sizes: vec![1_000, 10_000, 100_000],
        clients: vec![1, 8, 64],
        seconds: 3.0,
        ops: Op::ALL.to_vec(),
        out: None,
        keep_versions: None,
        producers: vec![Producer::RustXlsxwriter],
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let list = |v: &str| v.split(',').map(|n| n.parse().expect("a number")).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--sizes" => o.sizes = list(&value),
            "--clients" => o.clients = list(&value),
            "--seconds" => o.seconds = value.parse().expect("seconds"),
            "--ops" => {
                o.ops = value
                    .split(',')
                    .map(|key| {
                        let found = Op::ALL.into_iter().find(|op| op.key() == key);
                        found.unwrap_or_else(|| {
                            panic!("--ops takes read, update, insert1, insert100, delete")
                        })
                    })
                    .collect()
            }
            "--out" => o.out = Some(value),
            "--keep-versions" => o.keep_versions = Some(value),
            "--producer" => {
                o.producers = if value == "all" {
                    Producer::ALL.to_vec()
                } else {
                    let found = Producer::ALL.into_iter().find(|p| p.key() == value);
                    vec![found.unwrap_or_else(|| {
                        panic!(
                            "--producer takes rust_xlsxwriter, openpyxl, libreoffice, excel or all"
                        )
                    })]
                }
            }
            _ => {
                i += 1; // cargo passes --bench; ignore what we do not know
                continue;
            }
        }
        i += 2;
    }
    o
}

/// Median time rust_xlsxwriter takes to write the workbook (3 runs).
fn floor(rows: usize) -> Duration {
    let mut times: Vec<Duration> = (0..3)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(write_workbook(rows));
            start.elapsed()
        })
        .collect();
    times.sort();
    times[1]
}

struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(dir: &Path, keep_versions: Option<&str>) -> Server {
        let mut args = vec!["--queue-limit", "1000"];
        if let Some(keep) = keep_versions {
            args.extend(["--keep-versions", keep]);
        }
        let (child, base) = spawn_sheetd(dir, &args);
        Server { child, base }
    }

    /// Peak resident memory so far (VmHWM), in MiB.
    fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        kib / 1024.0
    }

    /// CPU time the server has used so far (user and system), in seconds.
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // After the command name in parentheses: state is field 3, utime
        // field 14 and stime field 15, in clock ticks.
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
        ticks / clock_ticks()
    }
}

/// Clock ticks per second of /proc/<pid>/stat (`getconf CLK_TCK`; 100).
fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Insert1,
    Insert100,
    UpdateOne,
    ReadOne,
    DeleteOne,
}

impl Op {
    const ALL: [Op; 5] = [
        Op::ReadOne,
        Op::UpdateOne,
        Op::Insert1,
        Op::Insert100,
        Op::DeleteOne,
    ];

    /// The operation's name on the command line (`--ops`).
    fn key(self) -> &'static str {
        match self {
            Op::Insert1 => "insert1",
            Op::Insert100 => "insert100",
            Op::UpdateOne => "update",
            Op::ReadOne => "read",
            Op::DeleteOne => "delete",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Op::Insert1 => "insert 1 row",
            Op::Insert100 => "insert 100 rows",
            Op::UpdateOne => "update by filter (1 match)",
            Op::ReadOne => "filtered read (1 match)",
            Op::DeleteOne => "delete by filter (1 match)",
        }
    }
    fn rows(self) -> u64 {
        if self == Op::Insert100 { 100 } else { 1 }
    }
}

/// The `n`th row the benchmark inserts into `producer`'s sheet.
fn new_row(producer: Producer, n: u64) -> Value {
    match producer {
        // Its header is col1 … col10.
        Producer::Excel => {
            json!({"col1": format!("new {n}"), "col2": n, "col3": 1.5, "col4": "2024/01/15",
           "col5": true, "col6": 3, "col7": "added by the benchmark", "col8": format!("N-{n}"), "col9": 9.5, "col10": "x"})
        }
        _ => {
            json!({"id": 1_000_000 + n, "name": format!("new {n}"), "city": "Rome", "amount": 1.5, "joined": "2024/01/15",
           "active": true, "qty": 3, "note": "added by the benchmark", "code": format!("N-{n}"), "score": 9.5})
        }
    }
}

/// The request of `op` for the `n`th request, on the row `target` of the
/// `rows`: by its `id` where the sheet has one; on the Excel-saved sheet,
/// whose rows are all alike, by its position in the first half of the rows
/// (a delete moves the others up).
fn request(
    client: &reqwest::Client,
    url: &str,
    op: Op,
    producer: Producer,
    n: u64,
    target: u64,
) -> reqwest::RequestBuilder {
    let by_id = producer != Producer::Excel;
    let row = target / 2 + 2;
    match op {
        Op::Insert1 => client
            .post(url)
            .json(&json!({"data": [new_row(producer, n)]})),
        Op::Insert100 => {
            let data: Vec<Value> = (0..100).map(|k| new_row(producer, n * 100 + k)).collect();
            client.post(url).json(&json!({ "data": data }))
        }
        Op::UpdateOne if by_id => client.patch(url).json(&json!({
            "type": "filter", "filter": format!("id:eq:{target}"), "data": {"score": n}
        })),
        Op::UpdateOne => client
            .patch(url)
            .json(&json!({"type": "row", "row": row, "data": {"col2": n}})),
        Op::ReadOne if by_id => client.get(format!("{url}?filter=id:eq:{target}")),
        Op::ReadOne => client.get(format!("{url}?offset={}&limit=1", target / 2)),
        // 7919 is prime and divides no size, so the first
        // `rows` requests each find a row not yet deleted.
        Op::DeleteOne if by_id => client.delete(url).json(&json!({
            "type": "filter", "filter": format!("id:eq:{target}")
        })),
        Op::DeleteOne => client.delete(url).json(&json!({"type": "row", "row": row})),
    }
}

/// Runs `op` from `clients` clients for `seconds`; returns latencies and elapsed time.
async fn run(
    base: &str,
    producer: Producer,
    op: Op,
    clients: usize,
    seconds: f64,
    rows: usize,
) -> (Vec<Duration>, Duration) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()
        .unwrap();
    let url = format!("{base}/v1/data/{ID}/{}", producer.sheet());
    let counter = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (client, url, counter) = (client.clone(), url.clone(), counter.clone());
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                // At least one request each, then until the deadline.
                while latencies.is_empty() || Instant::now() < deadline {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    // Targets are distinct for the first `rows` requests (7,919
                    // is prime to every size); a delete after that would find
                    // its row gone and write nothing.
                    if op == Op::DeleteOne && n >= rows as u64 && !latencies.is_empty() {
                        break;
                    }
                    let target = (n * 7919) % rows as u64;
                    let request = request(&client, &url, op, producer, n, target);
                    let sent = Instant::now();
                    let response = request.send().await.expect("request sent");
                    let status = response.status();
                    let _ = response.bytes().await;
                    assert!(status.is_success(), "{} answered {status}", op.name());
                    latencies.push(sent.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    (all, start.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let options = options();
    let mut table = String::from(
        "| rows | producer | operation | clients | requests/s | rows/s | p50 ms | server CPU ms / request | p95 ms | p99 ms | floor ms | p50 / floor | server peak RSS MiB |\n\
         |---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for &size in &options.sizes {
        let dir = tempfile::tempdir().unwrap();
        let floor = floor(size);
        eprintln!(
            "{size} rows: rust_xlsxwriter alone writes the workbook in {} ms",
            ms(floor)
        );
        for &producer in &options.producers {
            if !producer.makes(size) {
                eprintln!("{size} rows: no workbook of {} has as many", producer.key());
                continue;
            }
            let workbook = producer.workbook(size);
            for &op in &options.ops {
                for &clients in &options.clients {
                    // A fresh copy for each cell, so inserts do not pile up across cells.
                    std::fs::write(dir.path().join(format!("{ID}.xlsx")), &workbook).unwrap();
                    let server = Server::start(dir.path(), options.keep_versions.as_deref());
                    // Warm the cache: the first request parses the workbook.
                    let sheet = producer.sheet();
                    reqwest::get(format!("{}/v1/data/{ID}/{sheet}?limit=0", server.base))
                        .await
                        .unwrap();
                    let cpu_before = server.cpu_seconds();
                    let (mut latencies, elapsed) =
                        run(&server.base, producer, op, clients, options.seconds, size).await;
                    let cpu = server.cpu_seconds() - cpu_before;
                    latencies.sort();
                    let rps = latencies.len() as f64 / elapsed.as_secs_f64();
                    let p50 = percentile(&latencies, 0.5);
                    let line = format!(
                        "| {size} | {} | {} | {clients} | {rps:.1} | {:.1} | {} | {:.1} | {} | {} | {} | {:.2} | {:.0} |\n",
                        producer.key(),
                        op.name(),
                        rps * op.rows() as f64,
                        ms(p50),
                        cpu * 1000.0 / latencies.len() as f64,
                        ms(percentile(&latencies, 0.95)),
                        ms(percentile(&latencies, 0.99)),
                        ms(floor),
                        p50.as_secs_f64() / floor.as_secs_f64(),
                        server.peak_rss_mib(),
                    );
                    eprint!("{line}");
                    table.push_str(&line);
                }
            }
        }
    }
    println!("\n{table}");
    if let Some(path) = options.out {
        std::fs::write(path, table).unwrap();
    }
}
