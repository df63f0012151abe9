# Sourced by the CI checks that run a release server of their own
# (openapi-check.sh, readme-check.sh; explorer-check.sh for its binary). The sourcing script sets `work` (its
# scratch directory, holding server.log) and `keep` (1 keeps that
# directory) before calling these.

server_pid=

# Sets `bin` to the release binary the check tests: $SHEETD_BIN when set,
# else target/release/sheetd, built first (a no-op when it is up to date,
# so a stale binary is never tested).
release_binary() {
    if [[ -n "${SHEETD_BIN:-}" ]]; then
        bin=$SHEETD_BIN
    else
        printf '==> %s\n' "cargo build --release --locked"
        cargo build --release --locked --quiet
        bin="${CARGO_TARGET_DIR:-target}/release/sheetd"
    fi
    [[ -x "$bin" ]] || { echo "no executable at $bin" >&2; exit 1; }
}

# Stops the server; on failure shows the end of its log; removes `work`
# unless `keep` is 1. Installed as the EXIT trap by `on_exit_clean_up`.
clean_up() {
    local status=$?
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ $status -ne 0 && -s "$work/server.log" ]]; then
        echo "--- last lines of the server log ---" >&2
        tail -n 20 "$work/server.log" >&2 || true
    fi
    if [[ "${keep:-}" == 1 ]]; then
        echo "work directory kept: $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$status"
}

on_exit_clean_up() {
    trap clean_up EXIT
    trap 'exit 130' INT TERM
}

# Starts `$1` (the binary) with the remaining arguments on 127.0.0.1 and a
# port the kernel picks, logging to $work/server.log; sets `server_pid`,
# and `base` from the address the server logs ("listening on http://…"),
# waiting at most 10 s for it.
start_server() {
    local bin=$1
    shift
    : >"$work/server.log"
    RUST_LOG="${RUST_LOG:-sheetd=info,tower_http=warn}" NO_COLOR=1 \
        "$bin" --listen 127.0.0.1:0 "$@" >"$work/server.log" 2>&1 &
    server_pid=$!
    base=
    for _ in $(seq 1 200); do
        base=$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$work/server.log" | head -n 1 | sed 's/^listening on //' || true)
        [[ -n "$base" ]] && return 0
        kill -0 "$server_pid" 2>/dev/null || { echo "sheetd exited at start" >&2; exit 1; }
        sleep 0.05
    done
    echo "sheetd did not log 'listening on http://…' within 10 s" >&2
    exit 1
}
