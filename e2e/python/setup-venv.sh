#!/usr/bin/env bash
# Creates (or refreshes) the Python virtualenv of the e2e suite's Python clients:
# .fastloop/e2e-venv with e2e/python/requirements.txt. Idempotent: does nothing when the venv was
# built from the same requirements file. Needs python3 with the venv module (Debian: python3-venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${FASTLOOP_E2E_VENV:-$root/.fastloop/e2e-venv}"
req="$root/e2e/python/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then exit 0; fi
rm -rf "$venv"
python3 -m venv "$venv"
log="$(mktemp)"
# pip's retry warnings (an unreachable extra index, say) go to the log, shown only if it fails.
# First without retries: where an index is unreachable (these machines reach only local mirrors),
# pip's backoff on each package's page took 2 minutes of CI for a 3-second install. Where that
# fails (a flaky network), once more with pip's retries.
pip_install() { "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "$@" -r "$req" >"$log" 2>&1; }
if ! pip_install --retries 0 --timeout 10 && ! pip_install; then
  cat "$log" >&2
  exit 1
fi
rm -f "$log"
echo "$want" > "$stamp"
echo "e2e python venv ready: $venv"
