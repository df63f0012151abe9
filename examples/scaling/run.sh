#!/usr/bin/env bash
# Three sheetd instances behind nginx, which routes each request by the
# consistent hash of its spreadsheet id (examples/scaling/nginx.conf), then
# a fourth instance added and the workbooks that changed owner moved, then
# one instance stopped and started again. Every step is checked by
# check.py; the script prints what it measured and "OK", or exits non-zero.
# See README.md here and docs/SCALING.md.
#
#   bash examples/scaling/run.sh
#
# Environment: SCALING_WORKBOOKS (60), SCALING_TIMEOUT (120 s for the whole
# run), SCALING_INSTALL=1 to let the script install Debian's nginx-light
# with apt-get when nginx is missing (as root or with sudo; also done when CI is set), SCALING_KEEP=1 to keep the temporary
# directory (logs, data directories) after a successful run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."

workbooks=${SCALING_WORKBOOKS:-60}
sheetd=target/release/sheetd
fixture=fixtures/openpyxl/people.xlsx

# What the run needs, each step bounded on its own: installing nginx (only
# when asked to) and building sheetd (only when there is no binary yet; an
# existing one is used as it is).
if [ -z "${SCALING_BOUNDED:-}" ]; then
    if ! command -v nginx >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        fi
        if { [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; } &&
            { [ "${SCALING_INSTALL:-}" = 1 ] || [ -n "${CI:-}" ]; }; then
            timeout 600 $sudo apt-get install -y nginx-light >/dev/null ||
                { timeout 600 $sudo apt-get update >/dev/null &&
                    timeout 600 $sudo apt-get install -y nginx-light >/dev/null; }
        else
            echo "run.sh needs nginx: apt-get install -y nginx-light (Debian, as root)," >&2
            echo "or run it as root with SCALING_INSTALL=1 (or CI set) to let it install it" >&2
            exit 2
        fi
    fi
    for tool in curl python3 envsubst pgrep; do
        command -v "$tool" >/dev/null || { echo "run.sh needs $tool" >&2; exit 2; }
    done
    if [ ! -x "$sheetd" ]; then
        echo "building $sheetd (cargo build --release)..."
        timeout 1800 cargo build --release --quiet
    fi
    # The run itself is bounded too: run again under timeout, which
    # signals the script and every process it started (they share its
    # process group).
    export SCALING_BOUNDED=1
    exec timeout --kill-after=10 "${SCALING_TIMEOUT:-120}" bash "$here/run.sh" "$@"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sheetd-scaling.XXXXXX")
mkdir -p "$work/nginx-temp"
declare -A pid=()
nginx_pid=

stop_instance() {
    local name=$1
    if [ -n "${pid[$name]:-}" ]; then
        kill -TERM "${pid[$name]}" 2>/dev/null || true
        wait "${pid[$name]}" 2>/dev/null || true
        pid[$name]=
    fi
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [ -n "$nginx_pid" ]; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
    fi
    for name in "${!pid[@]}"; do
        stop_instance "$name"
    done
    if [ "$status" != 0 ] || [ "${SCALING_KEEP:-}" = 1 ]; then
        echo "logs and data directories kept in $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# Free ports on 127.0.0.1 (the kernel's choice; a port could be taken
# between this and its use, which the health checks would then report).
read -r -a ports < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(5)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
for s in socks:
    s.close()')
proxy=127.0.0.1:${ports[4]}
token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
names=(a b c d)

# Polls an address's /healthz until it answers 200 (at most 10 s).
wait_healthy() {
    local address=$1 process=$2
    for _ in $(seq 100); do
        if curl -sf --max-time 1 -o /dev/null "http://$address/healthz"; then
            return 0
        fi
        kill -0 "$process" 2>/dev/null || { echo "the process for $address exited" >&2; return 1; }
        sleep 0.1
    done
    echo "$address did not answer /healthz within 10 s" >&2
    return 1
}

# Starts instance NAME (index I) on its port with its own data directory.
# The directory is made first: sheetd puts a sample workbook only into a
# data directory it creates itself, and that sample, with the same id on
# every instance, would be served by one and orphaned on the others.
start_instance() {
    local name=$1 i=$2
    local variable unset=()
    mkdir -p "$work/data-$name"
    # Only the settings given here: none of the caller's SHEETD_* variables.
    for variable in $(compgen -e); do
        if [[ $variable == SHEETD_* ]]; then unset+=(-u "$variable"); fi
    done
    env "${unset[@]}" SHEETD_TOKENS="$token" \
        "$sheetd" --data-dir "$work/data-$name" --listen "127.0.0.1:${ports[$i]}" \
        >>"$work/$name.log" 2>&1 &
    pid[$name]=$!
    wait_healthy "127.0.0.1:${ports[$i]}" "${pid[$name]}"
}

# Writes the instances file for check.py and nginx.conf for the first N
# instances.
configure() {
    local n=$1 i servers=""
    : >"$work/instances"
    for ((i = 0; i < n; i++)); do
        printf '%s\t127.0.0.1:%s\t%s\t%s\n' "${names[$i]}" "${ports[$i]}" \
            "$work/data-${names[$i]}" "$work/${names[$i]}.log" >>"$work/instances"
        servers+="        server 127.0.0.1:${ports[$i]} max_fails=0;"$'\n'
    done
    # shellcheck disable=SC2016 # the names envsubst may replace, as written
    SCALING_DIR=$work SCALING_LISTEN=$proxy SCALING_SERVERS=${servers%$'\n'} \
        envsubst '${SCALING_DIR} ${SCALING_LISTEN} ${SCALING_SERVERS}' \
        <"$here/nginx.conf" >"$work/nginx.conf"
    nginx -t -q -p "$work" -c "$work/nginx.conf"
}

# Reloads nginx's configuration, and waits until the workers that ran the
# old one are gone, so that every later request is routed by the new one.
reload_nginx() {
    local old
    old=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
    [ -n "$old" ] || { echo "nginx has no worker to replace" >&2; return 1; }
    kill -HUP "$nginx_pid"
    for _ in $(seq 100); do
        # shellcheck disable=SC2086 # a list of pids
        kill -0 $old 2>/dev/null || return 0
        sleep 0.1
    done
    echo "nginx kept its old workers for 10 s after a reload" >&2
    return 1
}

check() {
    python3 "$here/check.py" "$@" --proxy "$proxy" --token "$token" \
        --instances "$work/instances" --ids "$work/ids" --fixture "$fixture" \
        --access-log "$work/nginx-access.log"
}

echo "== three instances behind $(nginx -v 2>&1 | sed 's/^nginx version: //') on $proxy"
for i in 0 1 2; do
    start_instance "${names[$i]}" "$i"
done
configure 3
# As the current user: with root, nginx would run its worker as nobody,
# which may not use the temporary directory.
globals="daemon off;"
if [ "$(id -u)" = 0 ]; then
    globals+=" user $(id -un) $(id -gn);"
fi
nginx -p "$work" -c "$work/nginx.conf" -g "$globals" >>"$work/nginx.out" 2>&1 &
nginx_pid=$!
wait_healthy "$proxy" "$nginx_pid"

check load "$workbooks"
check verify
echo "what the proxy answers itself, and a token passing through:"
check refusals

echo "== a fourth instance"
start_instance d 3
configure 4
reload_nginx
check rebalance
check verify

echo "== instance b stopped"
stop_instance b
check outage b
start_instance b 1
echo "b started again:"
check verify

echo OK
