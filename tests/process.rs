//! The real binary as a process: killed with SIGKILL at random points it
//! loses no acknowledged row; stopped with SIGTERM it exits 0.
//!
//! The crash test is `#[ignore]`d (it restarts the server dozens of times);
//! `.ci/run` runs it against the release binary:
//! `cargo test --release --test process -- --ignored`.
//! `SHEETD_CRASH_ROUNDS` and `SHEETD_CRASH_SEED` change its rounds and seed.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command};

use calamine::Data;
use common::spawn::spawn_sheetd;
use common::*;
use serde_json::json;
use tokio::sync::mpsc;

/// The server binary as a child process, and the address it listens on.
struct Process {
    child: Child,
    base: String,
}

impl Process {
    /// Starts `sheetd` on an ephemeral port and waits for its "listening" line.
    fn start(dir: &Path) -> Process {
        let (child, base) = spawn_sheetd(dir, &[]);
        Process { child, base }
    }

    fn kill(mut self) {
        self.child.kill().expect("SIGKILL sent");
        self.child.wait().expect("reaped");
    }
}

/// A tiny deterministic generator (xorshift64*), so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Counts each `name` of sheet People on disk (rows below the 3 of the fixture).
fn names_on_disk(dir: &Path) -> HashMap<String, usize> {
    let grid = read_sheet(&dir.join(format!("{ID}.xlsx")), "People");
    let mut counts = HashMap::new();
    for row in grid.iter().skip(4) {
        match row.first() {
            Some(Data::String(name)) => *counts.entry(name.clone()).or_insert(0) += 1,
            other => panic!("unexpected first cell {other:?} in row {row:?}"),
        }
    }
    counts
}

/// After a restart: the workbook opens, every acknowledged row is there
/// exactly once, no row is there twice, and no temp file is left.
fn assert_survived(dir: &Path, acknowledged: &[String], when: &str) {
    let on_disk = names_on_disk(dir);
    for name in acknowledged {
        assert_eq!(
            on_disk.get(name),
            Some(&1),
            "{when}: acknowledged row {name}"
        );
    }
    assert!(
        on_disk.values().all(|&n| n == 1),
        "{when}: a row written twice"
    );
    assert_eq!(
        temp_files(dir),
        Vec::<String>::new(),
        "{when}: temp files left"
    );
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.starts_with(".sheetd-tmp"))
        .collect()
}

/// Sends inserts of unique names until the server goes away; reports each
/// acknowledged name on `acks`.
async fn insert_until_gone(
    base: String,
    client: reqwest::Client,
    worker: String,
    acks: mpsc::UnboundedSender<String>,
) {
    for i in 0.. {
        let name = format!("{worker}-{i}");
        let sent = client
            .post(format!("{base}{}", rows_path("People")))
            .json(&json!({"data": [{"name": name, "age": i}]}))
            .send()
            .await;
        match sent {
            Ok(response) if response.status() == 201 => {
                if acks.send(name).is_err() {
                    return;
                }
            }
            Ok(response) => panic!("unexpected status {}", response.status()),
            Err(_) => return, // the server was killed
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "restarts the server many times; run by .ci/run in release mode"]
async fn acknowledged_rows_survive_sigkill() {
    let rounds: u64 = std::env::var("SHEETD_CRASH_ROUNDS").map_or(25, |v| v.parse().unwrap());
    let seed: u64 = std::env::var("SHEETD_CRASH_SEED").map_or(0x5eed, |v| v.parse().unwrap());
    let mut rng = Rng(seed | 1);
    let setup = Server::start().await;
    people_workbook(&setup);
    let dir = setup.data_dir().to_path_buf();
    let client = reqwest::Client::new();
    let mut acknowledged: Vec<String> = Vec::new();

    for round in 0..rounds {
        let process = Process::start(&dir);
        assert_survived(&dir, &acknowledged, &format!("round {round}"));

        let kill_after = 1 + rng.below(40);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let workers: Vec<_> = (0..4)
            .map(|w| {
                tokio::spawn(insert_until_gone(
                    process.base.clone(),
                    client.clone(),
                    format!("r{round}w{w}"),
                    tx.clone(),
                ))
            })
            .collect();
        drop(tx);
        for _ in 0..kill_after {
            acknowledged.push(rx.recv().await.expect("a worker acknowledged a row"));
        }
        process.kill();
        for worker in workers {
            worker.await.unwrap();
        }
        // Acknowledgements that arrived while the kill was under way count too.
        while let Ok(name) = rx.try_recv() {
            acknowledged.push(name);
        }
    }
    let process = Process::start(&dir);
    assert_survived(&dir, &acknowledged, "final");
    process.kill();
    println!(
        "crash test: {rounds} kills survived, {} acknowledged rows checked, {} rows on disk (seed {seed})",
        acknowledged.len(),
        names_on_disk(&dir).len()
    );
}

#[tokio::test]
async fn sigterm_stops_the_server_with_exit_code_zero() {
    let setup = Server::start().await;
    people_workbook(&setup);
    let dir = setup.data_dir().to_path_buf();
    let mut process = Process::start(&dir);
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{}{}", process.base, rows_path("People")))
        .json(&json!({"data": [{"name": "before-term"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);

    let pid = process.child.id().to_string();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let status = process.child.wait().expect("sheetd exits");
    assert_eq!(status.code(), Some(0));
    assert_eq!(names_on_disk(&dir).get("before-term"), Some(&1));
}

/// Stalled clients do not keep SIGTERM from ending the process: after the
/// shutdown timeout the connections still open are dropped.
#[tokio::test]
async fn sigterm_ends_the_process_despite_stalled_connections() {
    use std::io::Write;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let (mut child, base) = spawn_sheetd(
        dir.path(),
        &[
            "--shutdown-timeout-secs",
            "2",
            "--header-timeout-secs",
            "600",
            "--body-timeout-secs",
            "600",
        ],
    );
    let address = base.trim_start_matches("http://");
    let mut head = std::net::TcpStream::connect(address).unwrap();
    head.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut body = std::net::TcpStream::connect(address).unwrap();
    body.write_all(
        b"POST /v1/spreadsheets HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 15000000\r\n\r\nPK",
    )
    .unwrap();
    // Both requests reach the server: a third one is answered after them.
    let client = reqwest::Client::new();
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);

    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(15) {
            child.kill().unwrap();
            panic!("sheetd did not end within 15 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    drop((head, body));
}
