//! SIGHUP (contract §11.7): the audit log is opened again, so that log
//! rotation works, and the tokens file is read again; against the binary.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::spawn::spawn_sheetd;
use serde_json::json;

const ID: &str = "5ee7d000-0000-4000-8000-000000000001";

/// Longest a signal may take to be acted on.
const BOUND: Duration = Duration::from_secs(20);

fn hangup(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

async fn insert(base: &str, token: &str, name: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}/v1/data/{ID}/People"))
        .bearer_auth(token)
        .json(&json!({"data": [{"name": name}]}))
        .send()
        .await
        .expect("request sent")
        .status()
        .as_u16()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

#[tokio::test]
async fn sighup_opens_the_audit_log_again_after_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let log = dir.path().join("audit.jsonl");
    let (mut child, base) = spawn_sheetd(
        &data,
        &["--audit-log", log.to_str().unwrap(), "--token", "secret"],
    );
    assert_eq!(insert(&base, "secret", "before").await, 201);
    assert_eq!(lines(&log), 1);

    // logrotate's way: move the file, then SIGHUP.
    let rotated = dir.path().join("audit.jsonl.1");
    std::fs::rename(&log, &rotated).unwrap();
    hangup(child.id());
    // Writes go on while the signal is handled; once the log is open
    // again, the next write's line lands in the new file.
    let deadline = Instant::now() + BOUND;
    let mut written = 0;
    while lines(&log) == 0 {
        assert!(Instant::now() < deadline, "no new audit log after SIGHUP");
        assert_eq!(insert(&base, "secret", "after").await, 201);
        written += 1;
    }
    assert_eq!(lines(&log), 1, "one line in the new file");
    assert_eq!(lines(&rotated), written, "the others in the rotated file");
    child.kill().unwrap();
    let _ = child.wait();
}
