//! The binary as a user starts it (contract §7 and §9): configuration
//! errors stop it at once, its log shows one line per request, and the
//! command it suggests works as configured.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a started binary may take to print what a test waits for.
const PATIENCE: Duration = Duration::from_secs(20);

/// `sheetd` on `dir` and an ephemeral port, with `envs` set and `RUST_LOG`
/// unset (the default log level), its stdout lines sent to the receiver.
fn start(
    dir: &std::path::Path,
    args: &[&str],
    envs: &[(&str, &str)],
) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sheetd"))
        .args([
            "--data-dir",
            dir.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("SHEETD_TOKENS")
        .env_remove("SHEETD_READ_TOKENS")
        .envs(envs.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sheetd starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The first line of `lines` containing `needle`, waiting at most [`PATIENCE`].
fn line_with(lines: &mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        match lines.recv_timeout(PATIENCE) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(e) => panic!("no log line with {needle:?}: {e}"),
        }
    }
}

#[test]
fn an_empty_token_list_is_a_start_up_error() {
    let dir = tempfile::tempdir().unwrap();
    for envs in [[("SHEETD_TOKENS", "")], [("SHEETD_TOKENS", "a,,b")]] {
        let (mut child, _) = start(dir.path(), &[], &envs);
        let (tx, rx) = mpsc::channel();
        let mut stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            let _ = tx.send((child.wait().unwrap(), text));
        });
        let (status, stderr) = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("{envs:?}: sheetd kept running"));
        assert!(!status.success(), "{envs:?}");
        assert!(
            stderr.contains("a token must not be empty"),
            "{envs:?}: {stderr}"
        );
    }
}

#[test]
fn every_request_leaves_one_log_line_and_the_suggested_command_fits() {
    let dir = tempfile::tempdir().unwrap();
    // The directory exists and is empty: no sample workbook is made.
    let (mut child, lines) = start(dir.path(), &["--token", " secret "], &[]);
    let listening = line_with(&lines, "listening on http://");
    let address = listening
        .split("listening on http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let suggestion = line_with(&lines, "try: ");
    assert!(
        suggestion.contains("Authorization: Bearer $TOKEN") && suggestion.contains("POST"),
        "{suggestion}"
    );

    // The configured token was trimmed: " secret " is "secret".
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    std::io::Write::write_all(
        &mut stream,
        b"GET /v1/data/5ee7d000-0000-4000-8000-000000000001 HTTP/1.1\r\nHost: x\r\n\
          Authorization: bearer secret\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");

    let logged = line_with(&lines, "answered");
    for part in [
        "method=GET",
        "path=/v1/data/5ee7d000-0000-4000-8000-000000000001",
        "status=404",
        "ms=",
        "request_id=",
    ] {
        assert!(logged.contains(part), "{part} missing from {logged}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
}
