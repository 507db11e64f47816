#!/usr/bin/env python3
"""Starts every mcp.json entry of the README's "Install" section as VS Code does, and checks
its initialize answer (ci/vscode_start.py): `command` plus `args`, stdio pipes, the working
folder and the variables of VS Code (`${workspaceFolder}`, `${userHome}`, `${input:…}`). No
Node process may run below the entry's command (for `npx`: the package's install step put the
native bridge in place of its launcher); the Pss of each process is printed.

    python3 ci/readme_entries.py --npm DIR --wheels DIR --bin-dir DIR [README.md]

--npm         the folder of the npm tarballs, served by a registry on loopback
              (ci/npm_registry.py): `npx -y` downloads and installs the package from it into a
              fresh npm cache, as it does for a user
--wheels      the folder of the wheels (`uvx` and `pipx run` install from it, offline)
--bin-dir     the folder of the three programs as `cargo install` and the release archive
              leave them
An entry that cannot run here (a Windows path, the URL of the reader's server, a tool that is
not installed) is a skip, written as "SKIPPED: …" to stderr and to the file of MCP_SKIP_LOG.
Exit code 0 when every other entry answered, 1 otherwise.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts of ci/
import npm_registry  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The value of each `${input:…}` as the user would type it.
INPUT_VALUE = "typed-by-the-user"


def install_blocks(readme):
    """(heading, JSON text) of each ```json block of the Install section."""
    text = readme.read_text()
    m = re.search(r"^## Install\n(.*?)(?=^## )", text, re.M | re.S)
    if not m:
        sys.exit("readme_entries: README.md has no '## Install' section")
    heading, blocks, lines = "Install", [], iter(m.group(1).splitlines())
    for line in lines:
        if line.startswith("### "):
            heading = line[4:].strip()
        elif line.strip() == "```json":
            body = []
            for inner in lines:
                if inner.strip() == "```":
                    break
                body.append(inner)
            blocks.append((heading, "\n".join(body)))
    return blocks


def skip(label, why):
    line = f"SKIPPED: README entry {label}: {why}"
    print(line, file=sys.stderr)
    log = os.environ.get("MCP_SKIP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(line + "\n")


class Places:
    """The folders of one run: a workspace, a home, the caches of npm, uv and pipx."""

    def __init__(self, a, tmp, registry):
        self.a = a
        self.registry = registry
        self.workspace = tmp / "workspace"
        self.home = tmp / "home"
        self.tmp = tmp
        (self.home / ".local" / "bin").mkdir(parents=True)
        self.workspace.mkdir()
        bin_dir = Path(a.bin_dir).resolve()
        for name in ("mcp-bridge-vscode", "mcp-bridge-harness", "bridge-fixture-server"):
            (self.home / ".local" / "bin" / name).symlink_to(bin_dir / name)
        # The reader's own server: a Python script that needs its API key and then is the
        # fixture server (it replaces itself with it).
        fixture = bin_dir / "bridge-fixture-server"
        (self.workspace / "server.py").write_text(
            "import os, sys\n"
            "if not os.environ.get('API_KEY'):\n"
            "    sys.exit('server.py: API_KEY is not set')\n"
            f"os.execv({str(fixture)!r}, [{str(fixture)!r}])\n"
        )
        # `python` as on Windows and in most setups; Debian has only python3.
        self.extra_path = tmp / "path"
        self.extra_path.mkdir()
        if not shutil.which("python"):
            (self.extra_path / "python").symlink_to(sys.executable)

    def env(self, command):
        """The environment of a run of `command`, or the reason it cannot run here."""
        path = os.pathsep.join([str(self.extra_path), os.environ.get("PATH", "")])
        t = self.tmp
        uv = {
            "UV_OFFLINE": "1",
            "UV_NO_INDEX": "1",
            "UV_FIND_LINKS": str(Path(self.a.wheels).resolve()),
            "UV_CACHE_DIR": str(t / "uv-cache"),
            "UV_TOOL_DIR": str(t / "uv-tools"),
            "UV_PYTHON_DOWNLOADS": "never",
        }
        if command == "npx":
            return {
                "PATH": path,
                "npm_config_registry": self.registry,
                "npm_config_cache": str(t / "npm-cache"),
                "npm_config_prefix": str(t / "npm-prefix"),
                "npm_config_update_notifier": "false",
            }
        if command in ("uvx", "pipx"):
            if not shutil.which(command):
                return f"{command} is not installed here"
            env = dict(uv, PATH=path)
            if command == "pipx":
                env.update(
                    PIPX_HOME=str(t / "pipx"),
                    PIPX_BIN_DIR=str(t / "pipx-bin"),
                    PIP_NO_INDEX="1",
                    PIP_FIND_LINKS=uv["UV_FIND_LINKS"],
                )
            return env
        if command == "mcp-bridge-vscode":
            # As `cargo install` leaves it: the programs in a folder of the PATH.
            return {"PATH": os.pathsep.join([str(Path(self.a.bin_dir).resolve()), path])}
        return {"PATH": path}


def resolve(value, places, inputs):
    value = value.replace("${workspaceFolder}", str(places.workspace))
    value = value.replace("${userHome}", str(places.home))
    for name in inputs:
        value = value.replace("${input:" + name + "}", INPUT_VALUE)
    return value


def run_entry(label, server, places, inputs):
    command, args = server.get("command"), server.get("args", [])
    if server.get("type") != "stdio" or not isinstance(command, str):
        print(f"readme_entries: {label}: not a stdio entry with a command", file=sys.stderr)
        return False
    if "\\" in command or command.endswith(".exe"):
        skip(label, "a Windows path (this machine is not Windows)")
        return True
    if any(re.match(r"https?://", a) for a in args):
        skip(label, "the URL of the reader's own server (no network here)")
        return True
    env = places.env(command)
    if isinstance(env, str):
        skip(label, env)
        return True
    env.update({k: resolve(v, places, inputs) for k, v in server.get("env", {}).items()})
    argv = [resolve(command, places, inputs)] + [resolve(a, places, inputs) for a in args]
    cmd = [sys.executable, str(ROOT / "ci" / "vscode_start.py"), "--tree", "--no-node-below"]
    cmd += ["--cwd", str(places.workspace)]
    print(f"== README entry {label}: {' '.join([command] + args)}", flush=True)
    # The entry's environment (its `env`, as VS Code merges it) reaches the command through the
    # environment, never argv: `${input:…}` values are secrets.
    full = dict(os.environ, **env)
    return subprocess.run(cmd + ["--"] + argv, env=full).returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--npm", required=True)
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("readme", nargs="?", default=str(ROOT / "README.md"))
    a = ap.parse_args()
    blocks = install_blocks(Path(a.readme))
    ok, count = True, 0
    with (
        tempfile.TemporaryDirectory() as tmp,
        npm_registry.serve(Path(a.npm).resolve()) as registry,
    ):
        places = Places(a, Path(tmp), registry)
        for i, (heading, text) in enumerate(blocks, 1):
            try:
                config = json.loads(text)
            except ValueError as e:
                print(f"readme_entries: block {i} ({heading}) is not JSON: {e}", file=sys.stderr)
                ok = False
                continue
            inputs = [x.get("id") for x in config.get("inputs", [])]
            for name, server in config.get("servers", {}).items():
                count += 1
                ok &= run_entry(f"'{name}' ({heading}, block {i})", server, places, inputs)
    if count == 0:
        sys.exit("readme_entries: no mcp.json entry in the Install section")
    print(f"README entries: {count}, {'all answered or skipped' if ok else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
