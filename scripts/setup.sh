#!/usr/bin/env bash
# Installs the project and every Python tool it needs into the current Python (idempotent), and the
# Debian packages that build and run the reconciler image (buildah, podman, runc, mmdebstrap) and render
# Mermaid (chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -e '.[reconcile,tools,dev]'

# chromium: runs Mermaid's renderer for the forecast diagram test (scripts/mermaid-cli.sh; npm comes with nodejs).
debs=(buildah podman runc mmdebstrap uidmap chromium)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: missing Debian packages ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
