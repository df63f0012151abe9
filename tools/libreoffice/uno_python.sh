# Sourced by the LibreOffice scripts: sets UNO_PYTHON to a Python with the
# UNO bridge, or stops with `die` (which the caller defines). pyenv and venv
# interpreters usually lack the bridge; Debian's python3-uno installs it for
# /usr/bin/python3.
if [[ -n ${UNO_PYTHON:-} ]]; then
    "$UNO_PYTHON" -c 'import uno' 2>/dev/null || die "UNO_PYTHON=$UNO_PYTHON cannot import uno"
else
    for candidate in /usr/lib/libreoffice/program/python python3 /usr/bin/python3; do
        if command -v "$candidate" >/dev/null && "$candidate" -c 'import uno' 2>/dev/null; then
            UNO_PYTHON=$candidate
            break
        fi
    done
    [[ -n ${UNO_PYTHON:-} ]] ||
        die "no Python that can 'import uno' (apt-get install -y python3-uno, or set UNO_PYTHON)"
fi
