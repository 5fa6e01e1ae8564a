#!/usr/bin/env bash
# Mermaid's own renderer (@mermaid-js/mermaid-cli, pinned) for the test that renders the forecast's
# diagram, installed with npm into a cache outside the repository and run on Debian's Chromium: no
# browser is downloaded (PUPPETEER_SKIP_DOWNLOAD), puppeteer is pointed at /usr/bin/chromium by a config
# file, with --no-sandbox (CI runs as root, where Chromium's sandbox refuses to start).
# Idempotent; the last line printed is `export MMDC=... MMDC_PUPPETEER_CONFIG=...` for eval.
#   eval "$(bash scripts/mermaid-cli.sh | tail -n 1)"
set -euo pipefail

CLI_VERSION=11.4.2
MERMAID_VERSION=11.3.0
PUPPETEER_VERSION=23.11.1
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [ ! -x "$CHROMIUM" ]; then
  echo "mermaid-cli.sh: $CHROMIUM not found; install Debian's chromium (apt-get install chromium) or set CHROMIUM" >&2
  exit 1
fi
if ! command -v npm >/dev/null; then
  echo "mermaid-cli.sh: npm not found; install Node.js with its npm (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi

dir="${XDG_CACHE_HOME:-$HOME/.cache}/omerender-mermaid/cli-$CLI_VERSION-mermaid-$MERMAID_VERSION"
mmdc="$dir/node_modules/.bin/mmdc"
installed() {
  [ -x "$mmdc" ] && grep -q "\"version\": \"$CLI_VERSION\"" "$dir/node_modules/@mermaid-js/mermaid-cli/package.json" &&
    grep -q "\"version\": \"$MERMAID_VERSION\"" "$dir/node_modules/mermaid/package.json"
}
if ! installed; then
  mkdir -p "$dir"
  cat >"$dir/package.json" <<EOF
{
  "private": true,
  "dependencies": {
    "@mermaid-js/mermaid-cli": "$CLI_VERSION",
    "mermaid": "$MERMAID_VERSION",
    "puppeteer": "$PUPPETEER_VERSION"
  },
  "overrides": {"mermaid": "$MERMAID_VERSION"}
}
EOF
  (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error >&2)
  installed || { echo "mermaid-cli.sh: npm did not install mermaid-cli $CLI_VERSION with mermaid $MERMAID_VERSION in $dir" >&2; exit 1; }
fi
args='["--disable-gpu"]'
if [ "$(id -u)" -eq 0 ]; then args='["--no-sandbox", "--disable-gpu"]'; fi
printf '{"executablePath": "%s", "args": %s}\n' "$CHROMIUM" "$args" >"$dir/puppeteer.json"
echo "export MMDC=$mmdc MMDC_PUPPETEER_CONFIG=$dir/puppeteer.json"
