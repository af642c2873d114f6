#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the demo need, only when missing.
# Idempotent. The WebDAV and FTP issues add their servers and libraries here.
set -euo pipefail

packages=(ca-certificates)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    echo "installing: ${missing[*]}"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "swift is not installed (Swift 6 toolchain required)" >&2; exit 1; }
echo "dependencies present: ${packages[*]} and $(swift --version 2>/dev/null | head -1)"
