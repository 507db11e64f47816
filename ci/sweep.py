#!/usr/bin/env python3
"""The secret sweep of CI (docs/harness.md, "The secret sweep").

Usage: python3 ci/sweep.py [--dir DIR] [--replay-runs N]
       python3 ci/sweep.py --self-test
       python3 ci/sweep.py --plant-transcripts OUT; python3 ci/sweep.py --dir OUT/kept --expect-planted

Every output that the tests and the transcript replays kept in DIR ($MCP_STDERR_DIR) is read:
stdout frames, stderr (the bridge's, the fixture's, the test browser's), the browser opener's
argv and environment, Chromium's log, copies of the token-store folders and of the keyring
files. Each is searched for

- the planted secrets of ci/planted-secrets.txt (fixed strings the tests plant), and
- the random secrets learned at run time: the fixture appends every token, code, client secret,
  PKCE verifier and `state` of a sign-in to $BRIDGE_FIXTURE_ISSUED_SECRETS ("<kind> <value>"),

in clear and in their encoded forms: each file is also read URL-decoded, JSON-unescaped, and
with every run of Base64 (standard or URL-safe, any alignment) decoded. A value may appear only
in the outputs that the table ALLOWED below names (a code and a `state` ride in the URLs that a
real browser logs); anywhere else it is a hit, and one hit fails the sweep.

It prints the files and bytes read per kind, and fails when it read fewer files than
N full replays of transcripts/ plus one per process test of bridge/tests/it (an empty or partial
sweep cannot pass). `--self-test` writes every planted value and a sample of every issued kind,
in every form, into outputs of every kind (in memory) and fails unless the sweep finds each one;
`--plant-transcripts` and `--expect-planted` do the same through the real harness, bridge and
fixture (ci/sweep.sh).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import tempfile
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLANTED = ROOT / "ci" / "planted-secrets.txt"
ISSUED_VAR = "BRIDGE_FIXTURE_ISSUED_SECRETS"
ISSUED_NAME = "issued-secrets.txt"
# The kinds that every CI run must have reported (client secrets only come with some clients).
ISSUED_KINDS = ["at", "rt", "code", "verifier", "state"]

# Which issued kinds each kind of output may hold (docs/harness.md): the code and the state are
# in the redirect URLs that Chromium may log; nothing issued is anywhere else. Besides, a `state`
# may be in an authorization URL (`…/authorize?…&state=…`): the bridge's sign-in line on stderr
# and its URL elicitation on stdout carry that URL by design (docs/sign-in.md).
ALLOWED = {
    "chromium-log": {"code", "state"},
}
AUTHORIZE_URL = re.compile(rb"https?://[^\s\"'<>\\]*/authorize\?[^\s\"'<>\\]*")
# Runs of characters that issued values are made of (base64url, and RFC 7636's verifier set).
VALUE_RUN = re.compile(rb"[A-Za-z0-9._~-]{16,}")
BASE64_RUN = re.compile(rb"[A-Za-z0-9+/_-]{8,}={0,2}")
JSON_ESCAPE = re.compile(rb"\\(u[0-9a-fA-F]{4}|[\"\\/bfnrt])")


def kind_of(rel: str) -> str:
    """The kind of a kept file, from its name (docs/harness.md names them)."""
    top = rel.split("/", 1)[0]
    name = Path(rel).name
    if top.startswith("store-"):
        return "token-store"
    if top.startswith("keyring"):
        return "keyring-files"
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    if name.startswith(("transcript-", "process-", "soak-")) and ext == "stdout":
        return "bridge-stdout"
    if name.startswith("chromium-"):
        return "chromium-log"
    if name.startswith("browser-"):
        return f"browser-{ext}"
    if ext == "stderr":
        return "stderr"
    if ext == "stdout":
        return "other-stdout"
    return "other"


def planted_values() -> dict[bytes, set[str]]:
    """value -> the kinds of output that may hold it (`<value> may=<kind>,…` in the list: a
    form answer that a tool of the fixture echoes back to VS Code, for example)."""
    values: dict[bytes, set[str]] = {}
    for line in PLANTED.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            value, _, rest = line.partition(" may=")
            values[value.strip().encode()] = set(filter(None, rest.strip().split(",")))
    return values


def issued_values(path: Path | None) -> dict[bytes, str]:
    """The fixture's issued secrets: value -> kind."""
    values: dict[bytes, str] = {}
    if path and path.is_file():
        for line in path.read_bytes().splitlines():
            kind, _, value = line.partition(b" ")
            if len(value) >= 16:
                values[value] = kind.decode(errors="replace")
    return values


def json_unescape(data: bytes) -> bytes:
    def one(m: re.Match) -> bytes:
        e = m.group(1)
        if e.startswith(b"u"):
            return chr(int(e[1:], 16)).encode("utf-8", "surrogatepass")
        return {b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t"}.get(e, e)

    return JSON_ESCAPE.sub(one, data)


def base64_decoded(data: bytes) -> bytes:
    """Every run of Base64 decoded at each of its four alignments, both alphabets."""
    out = []
    for m in BASE64_RUN.finditer(data):
        run = m.group(0).rstrip(b"=").replace(b"-", b"+").replace(b"_", b"/")
        for k in range(4):
            part = run[k:]
            # A last group of 2 or 3 characters decodes with its padding; 1 is no byte.
            rest = len(part) % 4
            part = part[: len(part) - 1] if rest == 1 else part + b"=" * ((4 - rest) % 4)
            if len(part) >= 8:
                try:
                    out.append(base64.b64decode(part, validate=True))
                except ValueError:
                    pass
    return b"\n".join(out)


def views(data: bytes) -> dict[str, bytes]:
    """The file as read, and its decoded forms (only those that differ)."""
    found = {"clear": data}
    if b"%" in data or b"+" in data:
        found["url-decoded"] = urllib.parse.unquote_to_bytes(data.replace(b"+", b" "))
    if b"\\" in data:
        found["json-unescaped"] = json_unescape(data)
    decoded = base64_decoded(data)
    if decoded:
        found["base64-decoded"] = decoded
        if b"%" in decoded:
            found["base64-decoded, url-decoded"] = urllib.parse.unquote_to_bytes(decoded)
    return found


def issued_hits(view: bytes, issued: dict[bytes, str], lengths: list[int]) -> set[bytes]:
    hits = set()
    for m in VALUE_RUN.finditer(view):
        run = m.group(0)
        for n in lengths:
            for i in range(0, len(run) - n + 1):
                if run[i : i + n] in issued:
                    hits.add(run[i : i + n])
    return hits


def outside_authorize_urls(view: bytes, value: bytes) -> bool:
    """True when `value` occurs in `view` somewhere else than in an authorization URL."""
    inside = sum(m.group(0).count(value) for m in AUTHORIZE_URL.finditer(view))
    return view.count(value) > inside


def files_of(folder: Path):
    """(name relative to the folder, content) of every file under it but the issued list."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel != ISSUED_NAME:
            yield rel, path.read_bytes()


def sweep(files, planted: dict[bytes, set[str]], issued: dict[bytes, str]):
    """(per kind: [files, bytes], hits: [(file, kind, label, view)]) of `files`, pairs of a
    name and a content."""
    lengths = sorted({len(v) for v in issued})
    stats: dict[str, list[int]] = {}
    hits = []
    for rel, data in files:
        kind = kind_of(rel)
        s = stats.setdefault(kind, [0, 0])
        s[0] += 1
        s[1] += len(data)
        allowed = ALLOWED.get(kind, set())
        seen = set()
        for name, view in views(data).items():
            for value, may in planted.items():
                if kind not in may and value in view and value not in seen:
                    seen.add(value)
                    hits.append((rel, kind, value.decode(errors="replace"), name))
            for value in issued_hits(view, issued, lengths):
                if issued[value] in allowed or value in seen:
                    continue
                if issued[value] != "state" or outside_authorize_urls(view, value):
                    seen.add(value)
                    label = f"a {issued[value]} the fixture issued ({value[:10].decode()}…)"
                    hits.append((rel, kind, label, name))
    return stats, hits


def floor_of(replay_runs: int) -> tuple[int, int, int]:
    transcripts = len(list((ROOT / "transcripts").rglob("*.jsonl")))
    tests = sum(
        f.read_text().count("#[test]") for f in (ROOT / "bridge" / "tests" / "it").glob("*.rs")
    )
    return replay_runs * transcripts + tests, transcripts, tests


def report(stats, hits) -> int:
    files = sum(s[0] for s in stats.values())
    size = sum(s[1] for s in stats.values())
    for kind in sorted(stats):
        print(f"sweep: {kind}: {stats[kind][0]} files, {stats[kind][1]} bytes")
    for rel, kind, label, view in hits[:50]:
        print(f"sweep: HIT {label} in {rel} ({kind}, {view})", file=sys.stderr)
    return files, size


def issued_samples() -> dict[str, bytes]:
    """One random value of each kind that the fixture reports, shaped as it issues them."""
    samples = {
        kind: f"bfx_{kind}_".encode() + base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=")
        for kind in ["at", "rt", "code", "secret"]
    }
    samples["verifier"] = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=")
    samples["state"] = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=")
    return samples


def forms(v: bytes) -> dict[str, bytes]:
    """`v` in every form that the sweep must see through."""
    text = v.decode()
    out = {
        "clear": v,
        "url-encoded": urllib.parse.quote(text, safe="").encode(),
        # Every byte escaped: a valid encoding that only a decoder finds.
        "url-encoded-every-byte": "".join(f"%{b:02X}" for b in v).encode(),
        "url-encoded-plus": urllib.parse.quote_plus(text + " x").encode(),
        "json-escaped": json.dumps(text, ensure_ascii=True).encode()[1:-1],
        "json-unicode-escaped": "".join(f"\\u{ord(c):04x}" for c in text).encode(),
    }
    for k in range(3):
        padded = os.urandom(k) + v + os.urandom(2)
        out[f"base64-std-{k}"] = base64.b64encode(padded)
        out[f"base64-url-{k}"] = base64.urlsafe_b64encode(padded).rstrip(b"=")
        # Glued to a word (`id_…`): the run of Base64 starts k characters early.
        out[f"base64-after-a-word-{k}"] = b"id_"[: k + 1] + base64.b64encode(v)
    out["base64-of-url-encoded"] = base64.b64encode(out["url-encoded-every-byte"])
    return out


def self_test() -> int:
    """Every planted value and one sample of every issued kind, in every form, each in a file
    of a kind where it is not allowed: the sweep must find each one, and nothing in a clean
    file."""
    planted = planted_values()
    samples = issued_samples()

    kinds = ["transcript-x.stdout", "process-x.stderr", "browser-x.argv", "browser-x.env",
             "chromium-x.log", "store-x.d/k/file", "keyring/login.keyring"]
    # In memory: the same sweep as on a folder, without writing thousands of files.
    files: list[tuple[str, bytes]] = []
    issued_lines = b"".join(f"{k} ".encode() + v + b"\n" for k, v in samples.items())
    expected = set()
    n = 0
    values = [(v.decode(), v, None) for v in planted]
    # A planted value is not planted in the outputs that may hold it.
    may_hold = {v.decode(): m for v, m in planted.items()}
    values += [(f"a {k} the fixture issued ({v[:10].decode()}…)", v, k) for k, v in samples.items()]
    for label, value, issued_kind in values:
        for form, text in forms(value).items():
            for target in kinds:
                if issued_kind and issued_kind in ALLOWED.get(kind_of(target), set()):
                    continue
                if kind_of(target) in may_hold.get(label, set()):
                    continue
                tag = f"{n}-{form}"
                rel = target.replace("-x", f"-{tag}", 1).replace("keyring/", f"keyring{tag}/")
                n += 1
                files.append((rel, b'{"jsonrpc":"2.0","result":"' + text + b'"}\n'))
                expected.add((rel, label))
    # Clean files: a `state` in an authorization URL is where it belongs.
    url = b"https://127.0.0.1:1/authorize?response_type=code&state=" + samples["state"]
    files.append(("process-clean.stdout", b'{"jsonrpc":"2.0","result":"' + url + b'"}\n'))
    files.append(("process-clean.stderr", b"mcp-bridge-vscode: sign in at " + url + b"\n"))
    with tempfile.TemporaryDirectory() as tmp:
        issued_file = Path(tmp) / ISSUED_NAME
        issued_file.write_bytes(issued_lines)
        issued = issued_values(issued_file)
    stats, hits = sweep(files, planted, issued)
    found = {(rel, label) for rel, _, label, _ in hits}
    missed = sorted(expected - found)
    # An issued sample holds its planted prefix (bfx_at_…): a hit too, as it should be.
    extra = sorted((rel, label) for rel, label in found - expected
                   if not label.startswith("bfx_"))
    if any(rel.startswith("process-clean.") for rel, _ in found):
        extra.append(("process-clean.stdout", "a hit in a clean file"))
    files, size = report(stats, [])
    for rel, label in missed[:20]:
        print(f"sweep self-test: MISSED {label} in {rel}", file=sys.stderr)
    for rel, label in extra[:20]:
        print(f"sweep self-test: UNEXPECTED {label} in {rel}", file=sys.stderr)
    if missed or extra:
        print(f"sweep self-test: {len(missed)} missed, {len(extra)} unexpected of "
              f"{len(expected)} planted outputs", file=sys.stderr)
        return 1
    print(f"sweep self-test: found all {len(expected)} planted outputs "
          f"({len(values)} values in {len(forms(b'x'))} forms, {files} files, {size} bytes)")
    return 0


# The forms that stay what they are through a JSON string of the bridge's stdout (a JSON escape
# in a tool's text comes out escaped twice, which is not the value any more).
PLANT_FORMS = [f for f in forms(b"x") if not f.startswith("json-")]


def plant_transcripts(out: Path) -> int:
    """The printing mode of the self-test, through the real harness and bridge: writes
    `out/transcripts/plant-<form>.jsonl`, each calling the fixture's `echo` with every planted
    value (but those that the bridge's stdout may hold) and every issued sample in that form,
    and `out/kept/issued-secrets.txt`. `--expect-planted` then checks the kept stdout."""
    planted = [v for v, may in planted_values().items() if "bridge-stdout" not in may]
    samples = issued_samples()
    (out / "transcripts").mkdir(parents=True)
    (out / "kept").mkdir()
    (out / "kept" / ISSUED_NAME).write_bytes(
        b"".join(f"{k} ".encode() + v + b"\n" for k, v in samples.items()))
    values = planted + list(samples.values())
    for form in PLANT_FORMS:
        text = " ".join(forms(v)[form].decode() for v in values)
        lines = [
            {"setup": {"profile": "local", "upstream": "fixture"}},
            {"start": {}},
            {"call": "echo", "arguments": {"text": text}, "expect_text": text},
            {"stop": {}},
        ]
        (out / "transcripts" / f"plant-{form}.jsonl").write_text(
            "# The sweep's self-test (ci/sweep.sh): planted values on stdout on purpose.\n"
            + "".join(json.dumps(line) + "\n" for line in lines))
    return 0


def expect_planted(folder: Path) -> int:
    """True when the kept stdout of every `plant-<form>` transcript holds every value."""
    planted = planted_values()
    issued = issued_values(folder / ISSUED_NAME)
    stats, hits = sweep(files_of(folder), planted, issued)
    files, size = report(stats, [])
    wanted = [v.decode() for v, may in planted.items() if "bridge-stdout" not in may]
    wanted += [f"a {k} the fixture issued ({v[:10].decode()}…)" for v, k in issued.items()]
    missing = []
    for form in PLANT_FORMS:
        kept = [rel for rel, _ in files_of(folder)
                if rel.endswith(f"plant-{form}.jsonl.stdout")]
        if not kept:
            missing.append(f"no kept stdout of plant-{form}")
            continue
        found = {label for rel, _, label, _ in hits if rel in kept}
        missing += [f"{label} ({form})" for label in wanted if label not in found]
    for m in missing[:20]:
        print(f"sweep plant test: MISSED {m}", file=sys.stderr)
    if missing:
        print(f"sweep plant test: {len(missing)} missed", file=sys.stderr)
        return 1
    print(f"sweep plant test: every one of {len(wanted)} values in {len(PLANT_FORMS)} forms "
          f"found on the bridge's stdout kept by the harness ({files} files, {size} bytes)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=os.environ.get("MCP_STDERR_DIR"))
    ap.add_argument("--replay-runs", type=int, default=3,
                    help="full replays of transcripts/ that kept their outputs here (ci/test.sh: 3)")
    ap.add_argument("--no-issued-floor", action="store_true",
                    help="accept a run without a sign-in (the fixture reported no secret)")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--plant-transcripts", metavar="OUT", type=Path)
    ap.add_argument("--expect-planted", action="store_true",
                    help="with --dir: the kept outputs of --plant-transcripts hold every value")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.plant_transcripts:
        return plant_transcripts(args.plant_transcripts)
    if args.expect_planted:
        return expect_planted(Path(args.dir))
    if not args.dir:
        print("sweep: MCP_STDERR_DIR (or --dir) names the folder of the kept outputs", file=sys.stderr)
        return 1
    folder = Path(args.dir)
    issued_path = Path(os.environ.get(ISSUED_VAR) or folder / ISSUED_NAME)
    planted = planted_values()
    issued = issued_values(issued_path)
    stats, hits = sweep(files_of(folder), planted, issued)
    files, size = report(stats, hits)
    floor, transcripts, tests = floor_of(args.replay_runs)
    print(f"sweep: {len(planted)} planted and {len(issued)} issued secrets, {files} files "
          f"({size} bytes) read, {len(hits)} hits; floor {floor} files "
          f"({args.replay_runs} replays of {transcripts} transcripts + {tests} process tests)")
    if hits:
        print(f"sweep: {len(hits)} secrets found where none may be", file=sys.stderr)
        return 1
    # The tests of CI sign in many times: a kind that the fixture never reported means that the
    # report broke (or the variable was lost), and the sweep would miss those values.
    reported = set(issued.values())
    lacking = [k for k in ISSUED_KINDS if k not in reported]
    if lacking and not args.no_issued_floor:
        print(f"sweep: the fixture reported no {', '.join(lacking)} in {issued_path} "
              f"({ISSUED_VAR}): the random secrets of the sign-ins are unknown", file=sys.stderr)
        return 1
    if files < floor:
        print(f"sweep: only {files} files were kept, fewer than the floor {floor}: "
              "outputs are missing", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
