#!/usr/bin/env python3
"""Builds one wheel per staged target from the binaries that are already built.

    python3 packaging/pypi/make_wheels.py <stage dir> <out dir>
    python3 packaging/pypi/make_wheels.py --version     (the PEP 440 version of the wheels)

<stage dir> holds one folder per Rust target (x86_64-unknown-linux-gnu/, …) with
mcp-bridge-vscode, harness and bridge-fixture-server (.exe on Windows). Each wheel is what
maturin's `bindings = "bin"` makes: the binaries in `<name>-<version>.data/scripts/` (installed
into the environment's bin or Scripts folder, where `uvx` and `pipx run` find them) and the
`.dist-info` files; tagged `py3-none-<platform>`. Maturin is not used because it always compiles
the crate itself with its own cargo call (it does not package built binaries) and takes the
binaries of one package only (bridge/README.md, "npm and PyPI"). Only the standard library.
"""

import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path

NAME = "mcp-bridge-vscode"
REPOSITORY = "https://github.com/mcp-bridge-vscode/mcp-bridge-vscode"
DIST = NAME.replace("-", "_")
BINARIES = ["mcp-bridge-vscode", "mcp-bridge-harness", "bridge-fixture-server"]
ROOT = Path(__file__).resolve().parents[2]
# Fixed times make the same binaries give the same wheel.
EPOCH = (2020, 1, 1, 0, 0, 0)


def cargo_version():
    text = (ROOT / "Cargo.toml").read_text()
    m = re.search(r'^version = "([^"]+)"$', text, re.M)
    if not m:
        sys.exit("make_wheels: no version in Cargo.toml")
    return m.group(1)


# SemVer's pre-release names and PEP 440's: 0.1.0-rc.1 is 0.1.0rc1, 0.2.0-alpha.3 is 0.2.0a3.
PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc"}


def pep440(semver):
    """The PEP 440 form of a Cargo (SemVer) version; the wheel's name and METADATA use it."""
    m = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-([a-z]+)\.?(\d+))?", semver)
    if not m or (m.group(2) and m.group(2) not in PRE):
        sys.exit(f"make_wheels: {semver} has no PEP 440 form (use X.Y.Z or X.Y.Z-alpha|beta|rc.N)")
    release, pre, n = m.groups()
    return release + (f"{PRE[pre]}{n}" if pre else "")


def version():
    return pep440(cargo_version())


def glibc_floor(binary):
    """The newest glibc symbol version that the binary needs (e.g. (2, 17))."""
    found = re.findall(rb"GLIBC_2\.(\d+)(?:\.\d+)?\x00", binary.read_bytes())
    return (2, max((int(v) for v in found), default=17))


def linux_tags(arch, target, bridge):
    if "-musl" in target:
        if b"/lib/ld-musl-" in bridge.read_bytes():
            sys.exit(f"make_wheels: the {target} bridge loads musl dynamically; the release is static")
        # musllinux only, though a static binary runs on glibc too: a manylinux tag here would
        # make pip choose between this and the glibc wheel, whose name service (NSS) is the
        # system's (bridge/README.md, "Distribution").
        return [f"musllinux_1_2_{arch}"]
    manylinux = []
    major, minor = glibc_floor(bridge)
    minor = max(minor, 17)
    manylinux.append(f"manylinux_{major}_{minor}_{arch}")
    if minor == 17:
        manylinux.append(f"manylinux2014_{arch}")
    return manylinux


def platform_tags(target, bridge):
    """The wheel's platform tags for a Rust target, or None for one PyPI has no tag for."""
    arch = target.split("-")[0]
    if "-linux-" in target and arch in ("x86_64", "aarch64"):
        return linux_tags(arch, target, bridge)
    if "-windows-" in target:
        return {"x86_64": ["win_amd64"], "aarch64": ["win_arm64"]}.get(arch)
    if target == "x86_64-apple-darwin":
        return ["macosx_10_12_x86_64"]
    if target == "aarch64-apple-darwin":
        return ["macosx_11_0_arm64"]
    return None


def metadata(ver):
    readme = (ROOT / "packaging" / "pypi" / "README.md").read_text()
    head = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {ver}",
        "Summary: Lets VS Code use MCP servers of revision 2026-07-28: a stdio bridge, "
        "with the harness that shows what VS Code sees of a server",
        "License: Apache-2.0",
        f"Home-page: {REPOSITORY}",
        f"Project-URL: Repository, {REPOSITORY}",
        "Keywords: mcp,vscode,model-context-protocol,bridge",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme


def wheel_file(tags):
    lines = ["Wheel-Version: 1.0", "Generator: packaging/pypi/make_wheels.py"]
    lines.append("Root-Is-Purelib: false")
    lines += [f"Tag: py3-none-{t}" for t in tags]
    return "\n".join(lines) + "\n"


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def add(zf, path, data, mode):
    info = zipfile.ZipInfo(path, date_time=EPOCH)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def build(target_dir, out, ver):
    target = target_dir.name
    exe = ".exe" if "-windows-" in target else ""
    bins = [target_dir / f"{b}{exe}" for b in BINARIES]
    missing = [str(b) for b in bins if not b.is_file()]
    if missing:
        sys.exit(f"make_wheels: missing {', '.join(missing)}")
    tags = platform_tags(target, bins[0])
    if not tags:
        print(f"make_wheels: no wheel platform tag for {target}; left out", file=sys.stderr)
        return None
    wheel = out / f"{DIST}-{ver}-py3-none-{'.'.join(tags)}.whl"
    info = f"{DIST}-{ver}.dist-info"
    records = []
    with zipfile.ZipFile(wheel, "w") as zf:
        for b in bins:
            path = f"{DIST}-{ver}.data/scripts/{b.name}"
            data = b.read_bytes()
            add(zf, path, data, 0o755)
            records.append(record_line(path, data))
        files = {"METADATA": metadata(ver), "WHEEL": wheel_file(tags)}
        lic = ROOT / "LICENSE"
        if lic.is_file():
            files["LICENSE"] = lic.read_text()
        for name, text in files.items():
            data = text.encode()
            add(zf, f"{info}/{name}", data, 0o644)
            records.append(record_line(f"{info}/{name}", data))
        records.append(f"{info}/RECORD,,")
        add(zf, f"{info}/RECORD", ("\n".join(records) + "\n").encode(), 0o644)
    return wheel


def main():
    if sys.argv[1:2] == ["--version"]:
        # The wheels' version, for the checks that install them (ci/dist-pypi-test.sh).
        print(version())
        return
    if len(sys.argv) != 3:
        sys.exit("usage: make_wheels.py <stage dir> <out dir> | --version")
    stage, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    ver = version()
    made = [w for d in sorted(stage.iterdir()) if d.is_dir() for w in [build(d, out, ver)] if w]
    if not made:
        sys.exit(f"make_wheels: no staged target in {stage}")
    for w in made:
        print(f"pypi: {w.name}")


if __name__ == "__main__":
    main()
