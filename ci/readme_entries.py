#!/usr/bin/env python3
"""Starts every entry of the README's "Install" section as its client does, and checks its
initialize answer (ci/vscode_start.py): `command` plus `args`, stdio pipes, the working folder.
Both keys: `servers` (`.vscode/mcp.json`, with VS Code's variables `${workspaceFolder}`,
`${userHome}`, `${input:…}`) and `mcpServers` (`.mcp.json`, `~/.copilot/mcp-config.json`: no
`${…}` at all, absolute paths; the README's home `/home/you` stands for a home folder of the
run). Every option that an entry gives the bridge must be one of its `--help`, also in an entry
that is skipped. A secret that an entry names (`--secret-env`, `--secret-header`) is set first
with `secret set`, bound to the entry's command, in a state folder of the run; the reader's
commands `my-server` and `server.py` start only with that value. No Node process may run below
the entry's command (for `npx`: the package's install step put the native bridge in place of
its launcher); the Pss of each process is printed.

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
# The value of each `${input:…}` and of each secret, as the user would type it.
INPUT_VALUE = "typed-by-the-user"
# The home folder of the README's absolute paths (`.mcp.json` has no `${userHome}`).
README_HOME = "/home/you"
# The two keys of the three files, with the file that each one stands for in the output.
KEYS = {"servers": "a .vscode/mcp.json entry", "mcpServers": "a .mcp.json entry"}


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
        # The reader's own server: a Python script that needs its API key (the value the user
        # typed, as an input or a secret) and then is the fixture server (it replaces itself
        # with it); in the workspace (`${workspaceFolder}/server.py`), at the README's absolute
        # path, and as the command `my-server` on the PATH.
        fixture = bin_dir / "bridge-fixture-server"
        server = (
            "#!/usr/bin/env python3\n"
            "import os, sys\n"
            f"if os.environ.get('API_KEY') != {INPUT_VALUE!r}:\n"
            "    sys.exit('server.py: API_KEY is not the key that the user typed')\n"
            f"os.execv({str(fixture)!r}, [{str(fixture)!r}])\n"
        )
        self.extra_path = tmp / "path"
        self.extra_path.mkdir()
        project = self.home / "project"
        project.mkdir()
        for path in (self.workspace / "server.py", project / "server.py",
                     self.extra_path / "my-server"):
            path.write_text(server)
            path.chmod(0o755)
        # `python` as on Windows and in most setups; Debian has only python3.
        if not shutil.which("python"):
            (self.extra_path / "python").symlink_to(sys.executable)
        self.bridge = bin_dir / "mcp-bridge-vscode"
        self.options = bridge_options(self.bridge)
        # The secrets of the run: encrypted files in a state folder of its own, never the
        # keychain of the machine (the D-Bus address points nowhere).
        self.state = {
            "XDG_STATE_HOME": str(tmp / "state"),
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus",
        }

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
                **self.state,
                "PATH": path,
                "npm_config_registry": self.registry,
                "npm_config_cache": str(t / "npm-cache"),
                "npm_config_prefix": str(t / "npm-prefix"),
                "npm_config_update_notifier": "false",
            }
        if command in ("uvx", "pipx"):
            if not shutil.which(command):
                return f"{command} is not installed here"
            env = dict(uv, PATH=path, **self.state)
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
            return {
                **self.state,
                "PATH": os.pathsep.join([str(Path(self.a.bin_dir).resolve()), path]),
            }
        return {**self.state, "PATH": path}

    def set_secret(self, name, program):
        """`secret set <name> --command <program>` of the value that the user types."""
        run = subprocess.run(
            [str(self.bridge), "secret", "set", name, "--command", program, "--store", "file"],
            input=INPUT_VALUE + "\n", text=True, capture_output=True,
            env=dict(os.environ, **self.state, PATH=self.env("")["PATH"]),
        )
        if run.returncode != 0:
            return f"secret set {name} failed: {run.stderr.strip()}"
        return None


def bridge_options(bridge):
    """The options of the bridge's `--help` (its usage)."""
    usage = subprocess.run([str(bridge), "--help"], capture_output=True, text=True, check=True)
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", usage.stdout))


def bridge_args(command, args):
    """The arguments that the entry gives the bridge (up to `--`), or None when the entry
    starts something else."""
    name = command.replace("\\", "/").rsplit("/", 1)[-1]
    if name in ("mcp-bridge-vscode", "mcp-bridge-vscode.exe"):
        rest = args
    else:
        package = [i for i, a in enumerate(args) if re.fullmatch(r"mcp-bridge-vscode(@.+)?", a)]
        if name not in ("npx", "uvx", "pipx") or not package:
            return None
        rest = args[package[0] + 1:]
    return rest[: rest.index("--")] if "--" in rest else rest


def unknown_options(bridge, options):
    """The options in `bridge` (the entry's arguments of the bridge) that it does not have."""
    return [a.split("=", 1)[0] for a in bridge
            if a.startswith("--") and a.split("=", 1)[0] not in options]


def secrets_named(bridge):
    """The names of the secrets that the arguments of the bridge refer to."""
    names = []
    for option, value in zip(bridge, bridge[1:]):
        if option == "--secret-env":
            names.append(value.split("=", 1)[-1])
        elif option == "--secret-header":
            names += re.findall(r"\{([^{}]+)\}", value)
    return names


def file_rules(key, text):
    """What `.mcp.json` and `~/.copilot/mcp-config.json` refuse: any `${…}`, and a path that
    is not absolute (their client expands nothing and starts in no known folder)."""
    if key != "mcpServers":
        return None
    if "${" in text:
        return "a ${…} variable (the Copilot harness expands none)"
    for path in re.findall(r'"(\.{1,2}/[^"]*)"', text):
        return f"the relative path {path} (write absolute paths)"
    return None


def resolve(value, places, inputs):
    if value.startswith(README_HOME + "/"):
        value = str(places.home) + value[len(README_HOME):]
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
    bridge = bridge_args(command, args)
    if bridge is None:
        print(f"readme_entries: {label}: the entry does not start the bridge", file=sys.stderr)
        return False
    unknown = unknown_options(bridge, places.options)
    if unknown:
        print(f"readme_entries: {label}: not options of the bridge: {unknown}", file=sys.stderr)
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
    # The secrets first, bound to the command after `--` as the README's `secret set` binds it.
    upstream = argv[argv.index("--") + 1] if "--" in argv else None
    for name in secrets_named(bridge):
        failed = places.set_secret(name, upstream) if upstream else "no command to bind to"
        if failed:
            print(f"readme_entries: {label}: {failed}", file=sys.stderr)
            return False
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
    ok, count = True, dict.fromkeys(KEYS, 0)
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
            keys = [k for k in KEYS if k in config]
            if len(keys) != 1:
                print(f"readme_entries: block {i} ({heading}) needs one of {list(KEYS)}",
                      file=sys.stderr)
                ok = False
                continue
            broken = file_rules(keys[0], text)
            if broken:
                print(f"readme_entries: block {i} ({heading}): {broken}", file=sys.stderr)
                ok = False
            for name, server in config[keys[0]].items():
                count[keys[0]] += 1
                label = f"'{name}' ({KEYS[keys[0]]}, {heading}, block {i})"
                ok &= run_entry(label, server, places, inputs)
    if not all(count.values()):
        sys.exit(f"readme_entries: the Install section needs entries of both keys: {count}")
    counts = ", ".join(f"{n} under {k}" for k, n in count.items())
    print(f"README entries: {counts}, {'all answered or skipped' if ok else 'FAILED'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
