//! The `sheetd` binary as a child process, shared by the process tests and
//! the load benchmark (`#[path]`-included there).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Starts the binary on `dir` and an ephemeral port with `extra` flags,
/// waits for its "listening on" log line and returns the child and its base
/// URL. The rest of its log is drained so it never blocks on a full pipe.
pub fn spawn_sheetd(dir: &Path, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sheetd"))
        .args([
            "--data-dir",
            dir.to_str().expect("a UTF-8 path"),
            "--listen",
            "127.0.0.1:0",
        ])
        .args(extra)
        .env("RUST_LOG", "sheetd=info")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("sheetd starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let base = loop {
        let line = lines
            .next()
            .expect("sheetd printed its address")
            .expect("a log line");
        if let Some(at) = line.find("listening on http://") {
            let rest = &line[at + "listening on ".len()..];
            break rest
                .split_whitespace()
                .next()
                .expect("an address")
                .to_owned();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, base)
}
