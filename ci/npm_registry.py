"""A registry on loopback that serves the npm tarballs of one folder, so that a test runs
`npx -y mcp-bridge-vscode …` exactly as a user does: npm reads the package documents, picks the
platform package whose `os` and `cpu` match, downloads, checks the integrity, runs the install
step. Nothing else is served (any other name answers 404).

    with serve(Path("target/dist/npm")) as url: ...   # url = "http://127.0.0.1:<port>/"
"""

import base64
import contextlib
import hashlib
import http.server
import json
import tarfile
import threading
import urllib.parse


def documents(folder, base):
    """The package documents (one per name) and the tarball bytes (by file name)."""
    docs, blobs = {}, {}
    for tgz in sorted(folder.glob("*.tgz")):
        data = tgz.read_bytes()
        with tarfile.open(tgz) as tar:
            member = tar.extractfile("package/package.json")
            if member is None:
                raise ValueError(f"{tgz} has no package/package.json")
            manifest = json.load(member)
        name, version = manifest["name"], manifest["version"]
        blobs[tgz.name] = data
        sha512 = base64.b64encode(hashlib.sha512(data).digest()).decode()
        manifest["_id"] = f"{name}@{version}"
        manifest["dist"] = {
            "tarball": f"{base}tarballs/{tgz.name}",
            "integrity": f"sha512-{sha512}",
            "shasum": hashlib.sha1(data).hexdigest(),
        }
        doc = docs.setdefault(name, {"name": name, "dist-tags": {}, "versions": {}})
        doc["versions"][version] = manifest
        doc["dist-tags"]["latest"] = version
    return docs, blobs


@contextlib.contextmanager
def serve(folder):
    state = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
            if path.startswith("tarballs/") and path[9:] in state["blobs"]:
                body, kind = state["blobs"][path[9:]], "application/octet-stream"
            elif path in state["docs"]:
                body, kind = json.dumps(state["docs"][path]).encode(), "application/json"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    state["docs"], state["blobs"] = documents(folder, base)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base
    finally:
        server.shutdown()
        server.server_close()
