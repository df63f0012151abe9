//! `sheetd`: parse the configuration, start logging, open the data
//! directory, serve until SIGINT or SIGTERM.

use std::io::IsTerminal;

use clap::Parser;
use sheetd::config::Command;
use sheetd::store::Store;
use sheetd::{AppState, Config, sample};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::parse();
    if let Some(Command::Token { name }) = &config.command {
        let (secret, entry) = sheetd::access::new_token(name);
        println!("# The secret: give it to the client, keep it nowhere else.\n# {secret}\n");
        println!("# The entry for the tokens file:\n{entry}");
        return Ok(());
    }
    tracing_subscriber::fmt()
        .with_ansi(std::io::stdout().is_terminal())
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("sheetd=info,tower_http=info")),
        )
        .init();

    let new_dir = !config.data_dir.exists();
    let store = Store::open(&config.data_dir, config.store_limits())?;
    if new_dir {
        store.create_from_model(sample::SAMPLE_ID, &sample::workbook())?;
        tracing::info!(dir = %config.data_dir.display(), "created the data directory with a sample workbook");
    }
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    let address = listener.local_addr()?;
    tracing::info!(?config, "listening on http://{address}");
    tracing::info!("try: {}", try_command(&config, &store, address));

    let state = AppState::new(config, store)?;
    state.keyring.watch(std::time::Duration::from_secs(1));
    if let Some(audit) = &state.audit {
        audit.reopen_on_hangup();
    }
    sheetd::serve(listener, state, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// A curl command that works against this server as configured: it reads
/// the sample workbook when there is one, else lists a workbook's sheets,
/// else uploads one; with tokens, it sends one (from `$TOKEN`, which the
/// user sets to one of them).
fn try_command(config: &Config, store: &Store, address: std::net::SocketAddr) -> String {
    let auth = if config.auth_required() {
        "-H \"Authorization: Bearer $TOKEN\" "
    } else {
        ""
    };
    let base = format!("http://{address}");
    if store.exists(sample::SAMPLE_ID) {
        return format!(
            "curl {auth}'{base}/v1/data/{}/People?limit=10'",
            sample::SAMPLE_ID
        );
    }
    match store.any_id() {
        Some(id) => format!("curl {auth}'{base}/v1/data/{id}'"),
        // A read-only token cannot upload: show what it can read.
        None if config.tokens.is_empty() && config.auth_required() => {
            format!("curl {auth}'{base}/v1/openapi.json'")
        }
        None => format!(
            "curl {auth}-X POST '{base}/v1/spreadsheets' \
             -H 'Content-Type: application/octet-stream' --data-binary @book.xlsx"
        ),
    }
}

/// Listens for Ctrl-C (SIGINT) and SIGTERM from now on, before the first
/// request is answered (a signal that came before a handler was set up
/// would kill the process); the future resolves on either.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let listen = |kind: SignalKind, name: &'static str| {
        signal(kind)
            .inspect_err(|e| tracing::error!(error = %e, "cannot listen for {name}"))
            .ok()
    };
    let interrupt = listen(SignalKind::interrupt(), "Ctrl-C");
    let terminate = listen(SignalKind::terminate(), "SIGTERM");
    async move {
        let received = |signal: Option<tokio::signal::unix::Signal>| async move {
            match signal {
                Some(mut signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = received(interrupt) => {},
            () = received(terminate) => {},
        }
        tracing::info!("shutting down: finishing requests in flight");
    }
}
