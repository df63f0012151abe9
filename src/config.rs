//! Configuration: every flag, its environment variable and its default.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

use std::time::Duration;

use clap::Parser;

use crate::access::{Grant, Permission};
use crate::store::Limits;

/// sheetd serves the sheets of the .xlsx workbooks in a directory as a JSON data API.
#[derive(Clone, Parser)]
#[command(version, about)]
pub struct Config {
    /// `sheetd token`: print a new secret and its tokens-file entry.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Directory holding the workbooks, one `<uuid>.xlsx` per spreadsheet.
    #[arg(long, env = "SHEETD_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,

    /// Address and port to listen on.
    #[arg(long, env = "SHEETD_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Bearer token that may read and write (repeatable; the variable takes a
    /// comma-separated list). With no token at all, no authentication is asked.
    #[arg(long = "token", env = "SHEETD_TOKENS", value_delimiter = ',', value_parser = parse_token)]
    pub tokens: Vec<String>,

    /// Bearer token that may only read (repeatable; comma-separated in the variable).
    #[arg(long = "read-token", env = "SHEETD_READ_TOKENS", value_delimiter = ',', value_parser = parse_token)]
    pub read_tokens: Vec<String>,

    /// TOML file of scoped tokens: each with a name, the SHA-256 of its
    /// secret, the workbooks (and optionally sheets or tables) it reaches,
    /// what it may do there, and an optional expiry. Read again on SIGHUP
    /// and when it changes. `sheetd token` makes a secret and its entry.
    #[arg(long, env = "SHEETD_TOKENS_FILE")]
    pub tokens_file: Option<PathBuf>,

    /// File to append one JSON line to per write request (refused ones
    /// too): time, token, request id, workbook, sheet, operation, rows,
    /// status, ETags. Opened again on SIGHUP, for log rotation.
    #[arg(long, env = "SHEETD_AUDIT_LOG")]
    pub audit_log: Option<PathBuf>,

    /// Earlier versions kept of each workbook: the file a write replaces is
    /// linked (no copy) under `.sheetd-versions/`, the oldest beyond this
    /// many unlinked; 0 keeps none.
    #[arg(long, env = "SHEETD_KEEP_VERSIONS", default_value_t = 10)]
    pub keep_versions: usize,

    /// Largest request body accepted, in bytes.
    #[arg(long, env = "SHEETD_MAX_BODY_BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body_bytes: usize,

    /// Most rows one insert may carry.
    #[arg(long, env = "SHEETD_MAX_ROWS_PER_REQUEST", default_value_t = 10_000)]
    pub max_rows_per_request: usize,

    /// Most cells a workbook may span (each row counts up to its last used
    /// column); larger files are not served and writes may not grow past it.
    #[arg(long, env = "SHEETD_MAX_CELLS", default_value_t = 20_000_000)]
    pub max_cells: usize,

    /// Memory for parsed workbooks, in bytes (estimated); past it the least
    /// recently used workbooks are dropped and parsed again when needed.
    #[arg(long, env = "SHEETD_CACHE_BYTES", default_value_t = 512 * 1024 * 1024)]
    pub cache_bytes: usize,

    /// Most write requests in flight for one spreadsheet (running or
    /// queued); more get 503 with Retry-After.
    #[arg(long, env = "SHEETD_QUEUE_LIMIT", default_value_t = 64)]
    pub queue_limit: usize,

    /// Longest a write waits for its spreadsheet's turn, in milliseconds;
    /// past it the request gets 503 with Retry-After and nothing is written.
    #[arg(long, env = "SHEETD_QUEUE_TIMEOUT_MS", default_value_t = 30_000)]
    pub queue_timeout_ms: u64,

    /// Write to workbooks even when the rewrite loses parts of them that
    /// sheetd cannot carry over (charts, images, notes, validations…).
    #[arg(long, env = "SHEETD_ALLOW_LOSSY_WRITES")]
    pub allow_lossy_writes: bool,

    /// Every row of a file written says its number (`r`), also the rows a
    /// delete or an insert between rows moved, which otherwise lean on
    /// the row before where they can: for readers that cannot count rows.
    #[arg(long, env = "SHEETD_NUMBER_EVERY_ROW")]
    pub number_every_row: bool,

    /// Most connections open at once; past it a new connection gets 503 and
    /// is closed. Lowered at start-up to stay under the open-file limit.
    #[arg(long, env = "SHEETD_MAX_CONNECTIONS", default_value_t = 10_000)]
    pub max_connections: usize,

    /// Most requests handled at once, over all connections; more get 503
    /// with Retry-After. `/healthz` does not count.
    #[arg(long, env = "SHEETD_MAX_REQUESTS", default_value_t = 512)]
    pub max_requests: usize,

    /// Seconds a client has to send a request's head (line and headers),
    /// counted from when the connection opens or its previous answer was
    /// sent: it is also how long an idle keep-alive connection stays open.
    #[arg(long, env = "SHEETD_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    pub header_timeout_secs: u64,

    /// Seconds a client has to send a request's whole body; past it the
    /// request gets 408 and nothing is written.
    #[arg(long, env = "SHEETD_BODY_TIMEOUT_SECS", default_value_t = 60)]
    pub body_timeout_secs: u64,

    /// Seconds an answer may wait for a client that reads none of it before
    /// the connection is closed.
    #[arg(long, env = "SHEETD_SEND_TIMEOUT_SECS", default_value_t = 60)]
    pub send_timeout_secs: u64,

    /// Memory for request bodies being received and handled, in bytes, over
    /// all requests; a body that does not fit gets 503 with Retry-After.
    #[arg(long, env = "SHEETD_MAX_BODY_MEMORY", default_value_t = 256 * 1024 * 1024)]
    pub max_body_memory: usize,

    /// Seconds SIGTERM or SIGINT waits for requests in flight before the
    /// process ends anyway (a commit under way always finishes: the file is
    /// replaced whole or not at all).
    #[arg(long, env = "SHEETD_SHUTDOWN_TIMEOUT_SECS", default_value_t = 10)]
    pub shutdown_timeout_secs: u64,

    /// Most workbooks parsed from their files at once (cold loads and
    /// uploads); others wait for a turn, up to the queue timeout.
    #[arg(long, env = "SHEETD_MAX_PARSES", default_value_t = 2)]
    pub max_parses: usize,

    /// Directory for the writer's temporary files (one per sheet being
    /// written, unlinked as soon as made); the data directory when not
    /// given, so that a small or in-memory /tmp does not bound writes.
    #[arg(long, env = "SHEETD_TEMP_DIR")]
    pub temp_dir: Option<PathBuf>,

    /// Origin whose browser pages may call the API (repeatable; the variable
    /// takes a comma-separated list): `https://app.example.com`, or `*` for
    /// any. None by default: browsers may not call sheetd from other sites.
    #[arg(long = "cors-origin", env = "SHEETD_CORS_ORIGINS", value_delimiter = ',', value_parser = parse_origin)]
    pub cors_origins: Vec<String>,

    /// Seconds a write's `Idempotency-Key` is remembered: a request with the
    /// same key within that time gets the first answer again.
    #[arg(long, env = "SHEETD_IDEMPOTENCY_WINDOW_SECS", default_value_t = 86_400)]
    pub idempotency_window_secs: u64,
}

/// What sheetd does besides serving.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum Command {
    /// Prints a new random secret, and the entry for it to paste into the
    /// tokens file (its SHA-256, reaching every workbook with `read`: edit
    /// `spreadsheets`, `sheets` and `can` to what the token is for).
    Token {
        /// The token's name, as the audit log and error details give it.
        #[arg(long, default_value = "new-token")]
        name: String,
    },
}

impl Config {
    /// The configuration used when nothing is given: `./data` on 127.0.0.1:8080.
    pub fn with_data_dir(data_dir: impl Into<PathBuf>) -> Config {
        let mut config = Config::parse_from(["sheetd"]);
        config.data_dir = data_dir.into();
        config
    }

    /// The store's share of the configuration.
    pub fn store_limits(&self) -> Limits {
        Limits {
            allow_lossy_writes: self.allow_lossy_writes,
            number_every_row: self.number_every_row,
            max_cells: self.max_cells,
            cache_bytes: self.cache_bytes,
            queue_limit: self.queue_limit,
            queue_timeout: Duration::from_millis(self.queue_timeout_ms),
            max_parses: self.max_parses.max(1),
            idempotency_window: Duration::from_secs(self.idempotency_window_secs),
            temp_dir: self.temp_dir.clone(),
            keep_versions: self.keep_versions,
        }
    }

    /// True when requests must carry a token.
    pub fn auth_required(&self) -> bool {
        !self.tokens.is_empty() || !self.read_tokens.is_empty() || self.tokens_file.is_some()
    }

    /// The tokens of `--token` (every permission) and `--read-token`
    /// (`read`), each named by its flag and place.
    pub fn command_line_grants(&self) -> Vec<Grant> {
        let all = [
            Permission::Read,
            Permission::Insert,
            Permission::Update,
            Permission::Delete,
            Permission::Manage,
        ];
        let full = self
            .tokens
            .iter()
            .enumerate()
            .map(|(i, secret)| Grant::everywhere(&format!("--token {}", i + 1), secret, &all));
        let read = self.read_tokens.iter().enumerate().map(|(i, secret)| {
            Grant::everywhere(
                &format!("--read-token {}", i + 1),
                secret,
                &[Permission::Read],
            )
        });
        full.chain(read).collect()
    }
}

/// A token as configured, without the spaces around it (`"a, b"` is `a`
/// and `b`). An empty one is a start-up error: a server that answered 401
/// to every request, as an empty list once gave, helps no one (§9).
fn parse_token(value: &str) -> Result<String, String> {
    let token = value.trim();
    if token.is_empty() {
        return Err(
            "a token must not be empty (leave the flag and variable unset to serve \
             without authentication)"
                .into(),
        );
    }
    Ok(token.to_owned())
}

/// An origin as browsers send it, `scheme://host[:port]` with nothing
/// after, or `*`: anything else would never match and is a start-up error.
fn parse_origin(value: &str) -> Result<String, String> {
    let origin = value.trim();
    if origin == "*" {
        return Ok(origin.to_owned());
    }
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains(['/', '?', '#', ' ']) => {
            Ok(origin.to_owned())
        }
        _ => Err(format!(
            "{origin:?} is not an origin: write scheme://host[:port] with nothing after \
             (https://app.example.com), or * for any"
        )),
    }
}

/// Tokens are secrets: never print them.
impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("command", &self.command)
            .field("data_dir", &self.data_dir)
            .field("listen", &self.listen)
            .field("tokens", &format_args!("[{} redacted]", self.tokens.len()))
            .field(
                "read_tokens",
                &format_args!("[{} redacted]", self.read_tokens.len()),
            )
            .field("tokens_file", &self.tokens_file)
            .field("audit_log", &self.audit_log)
            .field("keep_versions", &self.keep_versions)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_rows_per_request", &self.max_rows_per_request)
            .field("max_cells", &self.max_cells)
            .field("cache_bytes", &self.cache_bytes)
            .field("queue_limit", &self.queue_limit)
            .field("queue_timeout_ms", &self.queue_timeout_ms)
            .field("allow_lossy_writes", &self.allow_lossy_writes)
            .field("number_every_row", &self.number_every_row)
            .field("max_connections", &self.max_connections)
            .field("max_requests", &self.max_requests)
            .field("header_timeout_secs", &self.header_timeout_secs)
            .field("body_timeout_secs", &self.body_timeout_secs)
            .field("send_timeout_secs", &self.send_timeout_secs)
            .field("max_body_memory", &self.max_body_memory)
            .field("shutdown_timeout_secs", &self.shutdown_timeout_secs)
            .field("max_parses", &self.max_parses)
            .field("temp_dir", &self.temp_dir)
            .field("cors_origins", &self.cors_origins)
            .field("idempotency_window_secs", &self.idempotency_window_secs)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_trimmed() {
        let config =
            Config::try_parse_from(["sheetd", "--token", " a ", "--read-token", "b "]).unwrap();
        assert_eq!(config.tokens, ["a"]);
        assert_eq!(config.read_tokens, ["b"]);
    }

    #[test]
    fn cors_origins_are_origins_or_a_star() {
        let config = Config::try_parse_from([
            "sheetd",
            "--cors-origin",
            "https://app.example.com, http://localhost:3000",
        ])
        .unwrap();
        assert_eq!(
            config.cors_origins,
            ["https://app.example.com", "http://localhost:3000"]
        );
        assert!(Config::try_parse_from(["sheetd", "--cors-origin", "*"]).is_ok());
        for bad in ["app.example.com", "https://app.example.com/", "ftp://x", ""] {
            assert!(
                Config::try_parse_from(["sheetd", "--cors-origin", bad]).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_empty_token_is_a_start_up_error() {
        let error = Config::try_parse_from(["sheetd", "--token", ""]).unwrap_err();
        assert!(
            error.to_string().contains("a token must not be empty"),
            "{error}"
        );
        assert!(Config::try_parse_from(["sheetd", "--token", "a,,b"]).is_err());
    }
}
