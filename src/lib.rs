//! sheetd: the sheets of `.xlsx` workbooks as a JSON data API.
//!
//! A request goes http → model → store: the HTTP layer decodes and checks it,
//! a model function decides the edit on plain data, the store persists it
//! through the xlsx layer, which turns workbooks into bytes and back.

/// Tokens: what each may reach and do.
pub mod access;
/// Formula recalculation after each write, behind an engine interface.
pub mod calc;
/// Flags and environment variables.
pub mod config;
/// Hashes as hex.
mod hex;
/// Routes, extractors, handlers, errors and layers.
pub mod http;
/// The workbook as plain data and every rule about it.
pub mod model;
/// The workbook a new data directory starts with.
pub mod sample;
/// Files: commit, queue, cache, locks, atomic replace.
pub mod store;
/// The xlsx format: bytes ⇄ workbook, with calamine and rust_xlsxwriter.
pub mod xlsx;

pub use config::Config;
pub use http::{AppState, app, serve};

/// How many threads the machine runs at once, read once (on Linux, the
/// standard library reads the cgroup's quota at every ask): what long
/// scans and saves are shared out among.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
