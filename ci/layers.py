#!/usr/bin/env python3
"""The layer check: no import cycle and no arrow back up in the crates' sources.

Usage: python3 ci/layers.py [SRC_DIR ...]   (default: bridge/src harness/src fixture-server/src)

What it reads. Each crate root (lib.rs, main.rs, bin/*.rs) and the files its `mod` declarations
reach (with `#[path]`), with inline `mod x { ... }` blocks. In each file, comments and string
literals are blanked, then every `use` tree (`use crate::a::{b, c::d}`, `use super::x`,
`use child::y`) and every path in the code that starts with `crate::`, `super::` or `self::`
(and, in a binary, the library's name) is one arrow from the file to the file of the module it
names. When the path ends in an item that the named module only re-exports (`pub use`,
`pub(crate) use`), the arrow goes on to the module that defines it: a folder's `mod.rs` that
re-exports `state::Shared` does not stand between `exchange.rs` and `state.rs`.

The granularity (why this checks what the layering promises). Modules form a tree; the rule
is checked at every node of it, on the node's direct children: for each module M, the arrows
between M's children (a child folder standing for all the files under it) must form no cycle.
At the root these children are the top-level modules (`wire`, `auth`, `upstream`, ...): the
folder-level rule "auth/ and upstream/ do not import each other both ways". Inside a folder they
are its files (and sub-folders): the file-level rule "front/dispatch.rs and front/state.rs do
not import each other both ways". An arrow between a module and one of its own ancestors (a
file and its folder's `mod.rs`, which declares the folder's files and holds what they share,
such as the folder's options) is not counted: the folder's face and its parts are one unit at
the level above, and the face is not a sibling of its parts. Test code (`#[cfg(test)]`
modules and `*_tests.rs` files) counts like any code.

What fails (exit 1), each printed on one line:
  (a) a cycle among the children of one module (the arrows of the cycle, each with a file:line);
  (b) for bridge/src, an arrow between top-level modules that runs up against the layer table of docs/architecture.md
      (a module may use modules of its own rank or lower ranks; a top-level module that is not
      in that table is a failure too, so that a new module gets its place);
  (c) the named rules of bridge/src (RULES below): auth/ never imports upstream/; wire/,
      translate/, input/ and listen/ never import auth/, upstream/ or front/.
It prints what it checked: files, arrows, modules per level, and each failure.
"""

import os
import re
import sys
from collections import defaultdict

# The layer order of bridge/src, lowest first, is written once: the table of "The layers of the
# bridge" in docs/architecture.md, one row per rank, whose Folder column names the modules
# (`wire/`, `sync.rs`). A module may import modules of its own rank or lower ones (never a
# cycle: rule (a) holds at every rank). `lib.rs` is the crate root, not a module of a rank.
ARCHITECTURE = "docs/architecture.md"


def read_layers(path=ARCHITECTURE):
    """The ranks of the table in docs/architecture.md, each a list of module names."""
    text = open(path, encoding="utf-8").read()
    section = text.split("## The layers of the bridge", 1)[1].split("\n## ", 1)[0]
    ranks = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3:
            continue
        if cells[0] == "Layer" or set(cells[1]) <= set("- "):
            continue  # the header and its rule
        names = [re.sub(r"(/|\.rs)$", "", n) for n in re.findall(r"`([^`]+)`", cells[1])]
        names = [n for n in names if n != "lib"]
        if names:
            ranks.append(names)
    if not ranks:
        raise SystemExit(f"{path}: no layer table under '## The layers of the bridge'")
    return ranks


# Named rules: (crate dir, the importing top-level modules, the forbidden top-level modules).
RULES = [
    ("bridge/src", ["auth"], ["upstream"]),
    ("bridge/src", ["wire", "translate", "input", "listen"], ["auth", "upstream", "front"]),
]

DEFAULT_DIRS = ["bridge/src", "harness/src", "fixture-server/src"]

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|[{}();,*#\[\]=]|\S")


def blank(text):
    """The text with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'b?r#*"', text[i:i + 260]) and (i == 0 or not re.match(r"\w", text[i - 1])):
            m = re.match(r'b?r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokens(text):
    line = 1
    pos = 0
    for m in TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        yield m.group(0), line


def parse_use_tree(toks, i, prefix, out):
    """Parses a use tree at toks[i]; appends full paths (lists) to out; returns the next index."""
    path = list(prefix)
    while i < len(toks):
        t = toks[i][0]
        if t == "{":
            i += 1
            while i < len(toks) and toks[i][0] != "}":
                i = parse_use_tree(toks, i, path, out)
                if i < len(toks) and toks[i][0] == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append(path)
            return i + 1
        if t == "::":
            i += 1
            continue
        if re.match(r"\w+$", t):
            if t == "as":
                i += 2
                continue
            if t == "self" and path and prefix == path:
                # `use a::{self, b}`: `self` is the prefix itself.
                i += 1
                continue
            path = path + [t]
            i += 1
            continue
        break
    out.append(path)
    return i


class Crate:
    def __init__(self, src):
        self.src = src.rstrip("/")
        self.lib_name = self.library_name()
        self.modules = {}  # module path (tuple) -> file
        self.children = defaultdict(set)  # module path -> child names
        self.file_module = {}  # file -> module path of the file
        self.reexports = defaultdict(dict)  # module path -> {name: (context module, path)}
        self.refs = []  # (file, line, context module, path list, from a use tree)
        self.unreached = []
        roots = []
        if os.path.exists(os.path.join(self.src, "lib.rs")):
            roots.append((os.path.join(self.src, "lib.rs"), ()))
        if os.path.exists(os.path.join(self.src, "main.rs")):
            roots.append((os.path.join(self.src, "main.rs"), ("main",) if roots else ()))
        bin_dir = os.path.join(self.src, "bin")
        if os.path.isdir(bin_dir):
            for name in sorted(os.listdir(bin_dir)):
                path = os.path.join(bin_dir, name)
                if name.endswith(".rs"):
                    roots.append((path, ("bin", name[:-3])))
                elif os.path.exists(os.path.join(path, "main.rs")):
                    roots.append((os.path.join(path, "main.rs"), ("bin", name)))
        for path, module in roots:
            self.read(path, module, os.path.dirname(path), is_root=True)
        every = set()
        for dirpath, _, files in os.walk(self.src):
            for f in files:
                if f.endswith(".rs"):
                    every.add(os.path.normpath(os.path.join(dirpath, f)))
        self.unreached = sorted(every - set(self.file_module))

    def library_name(self):
        toml = os.path.join(os.path.dirname(self.src), "Cargo.toml")
        try:
            text = open(toml, encoding="utf-8").read()
        except OSError:
            return None
        lib = re.search(r"\[lib\][^\[]*?name\s*=\s*\"([^\"]+)\"", text)
        pkg = re.search(r"\[package\][^\[]*?name\s*=\s*\"([^\"]+)\"", text)
        name = lib.group(1) if lib else pkg.group(1) if pkg else None
        return name.replace("-", "_") if name else None

    def read(self, path, module, child_dir, is_root=False):
        path = os.path.normpath(path)
        if path in self.file_module:
            return
        self.file_module[path] = module
        self.modules[module] = path
        raw = open(path, encoding="utf-8").read()
        text = blank(raw)
        # `#[path = "x"] mod name;` (the attribute's string is blanked in `text`).
        path_attrs = {}
        for m in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:#\[[^\]]*\]\s*)*'
                             r'(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', raw):
            path_attrs[m.group(2)] = m.group(1)
        toks = list(tokens(text))
        stack = []  # frames: name of an inline module, or None for any other brace
        i = 0
        while i < len(toks):
            t, line = toks[i]
            inline = tuple(f for f in stack if f is not None)
            here = module + inline
            if t == "{":
                stack.append(None)
            elif t == "}":
                if stack:
                    stack.pop()
            elif t == "mod" and i + 2 < len(toks) and re.match(r"\w+$", toks[i + 1][0]):
                name, after = toks[i + 1][0], toks[i + 2][0]
                if after == "{":
                    stack.append(name)
                    self.children[here].add(name)
                    self.modules[here + (name,)] = path
                    i += 3
                    continue
                if after == ";" and not inline:
                    self.children[module].add(name)
                    if name in path_attrs:
                        child = os.path.join(os.path.dirname(path), path_attrs[name])
                        sub_dir = os.path.dirname(child)
                    else:
                        child = os.path.join(child_dir, name + ".rs")
                        sub_dir = os.path.join(child_dir, name)
                        if not os.path.exists(child):
                            child = os.path.join(child_dir, name, "mod.rs")
                    if os.path.exists(child):
                        self.read(child, module + (name,), sub_dir)
                i += 3
                continue
            elif t == "use" and (i == 0 or toks[i - 1][0] in ";{}])" or toks[i - 1][0] == "pub"
                                 or toks[i - 1][0] == "crate" and toks[i - 2][0] == "("):
                public = toks[i - 1][0] in ("pub", ")") and i > 0
                paths = []
                j = i + 1
                if j < len(toks) and toks[j][0] == "::":
                    j += 1
                j = parse_use_tree(toks, j, [], paths)
                for p in paths:
                    if p:
                        self.refs.append((path, line, here, p, True))
                        if public:
                            self.reexports[here][p[-1]] = (here, p)
                while j < len(toks) and toks[j][0] != ";":
                    j += 1
                i = j + 1
                continue
            elif t in ("crate", "super", "self") or (t == self.lib_name and module[:1] in (("main",), ("bin",))):
                prev = toks[i - 1][0] if i else ""
                if prev != "::" and i + 1 < len(toks) and toks[i + 1][0] == "::":
                    p = []
                    j = i
                    while j < len(toks) and re.match(r"\w+$", toks[j][0]):
                        p.append(toks[j][0])
                        if j + 1 < len(toks) and toks[j + 1][0] == "::":
                            j += 2
                        else:
                            break
                    self.refs.append((path, line, here, p, False))
                    i = j + 1
                    continue
            i += 1

    def resolve(self, context, p, depth=0):
        """The module path that `p` (used in module `context`) names, or None (outside)."""
        if not p or depth > 8:
            return None
        first = p[0]
        if first == "crate":
            # `crate::` in a binary names the binary's own modules.
            rest = p[1:]
            if context[:1] == ("main",):
                base = ("main",)
            elif context[:1] == ("bin",):
                base = context[:2]
            else:
                base = ()
        elif first == self.lib_name:
            base, rest = (), p[1:]
        elif first in ("super", "self"):
            base = context
            rest = list(p)
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
        elif first in self.children.get(context, ()):
            base, rest = context, p
        else:
            return None
        module = tuple(base)
        rest = list(rest)
        while rest and rest[0] in self.children.get(module, ()):
            module = module + (rest.pop(0),)
        if rest:
            again = self.reexports.get(module, {}).get(rest[0])
            if again and again[1] != p:
                target = self.resolve(again[0], again[1], depth + 1)
                if target is not None:
                    return target
        return module


def file_of(crate, module):
    while module not in crate.modules and module:
        module = module[:-1]
    return crate.modules.get(module)


def top_rank(order):
    return {name: rank for rank, names in enumerate(order) for name in names}


def sccs(nodes, edges):
    """Tarjan's strongly connected components of size > 1."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def name(module):
    return "::".join(module) if module else "crate"


def check(src):
    crate = Crate(src)
    failures = []
    arrows = {}  # (from module of file, to module of file) -> first (file, line)
    for path, line, context, p, _ in crate.refs:
        target = crate.resolve(context, p)
        if target is None:
            continue
        source = crate.file_module[path]
        target_file = file_of(crate, target)
        if target_file is None or target_file == path:
            continue
        key = (source, crate.file_module[target_file])
        arrows.setdefault(key, f"{path}:{line}")
    levels = defaultdict(lambda: defaultdict(set))
    evidence = {}
    for (s, d), where in arrows.items():
        k = 0
        while k < min(len(s), len(d)) and s[k] == d[k]:
            k += 1
        if k == len(s) or k == len(d):
            continue  # a module and its ancestor: one unit at the level above
        level, a, b = s[:k], s[k], d[k]
        levels[level][a].add(b)
        evidence.setdefault((level, a, b), where)
    nodes_per_level = {lvl: set(crate.children.get(lvl, ())) for lvl in levels}
    for lvl in sorted(levels, key=lambda m: (len(m), m)):
        nodes = nodes_per_level[lvl] | set(levels[lvl])
        for comp in sccs(nodes, levels[lvl]):
            inside = [f"{a} -> {b} ({evidence[(lvl, a, b)]})"
                      for a in comp for b in sorted(levels[lvl][a]) if b in comp]
            failures.append(f"cycle in {name(lvl)}: {{{', '.join(comp)}}}: " + "; ".join(inside))
    key = os.path.normpath(src)
    order = read_layers() if key == "bridge/src" else None
    if order:
        rank = top_rank(order)
        for top in sorted(crate.children.get((), set()) | ({"main"} if ("main",) in crate.modules else set())):
            if top not in rank:
                failures.append(f"layer: the top-level module {top} has no row in {ARCHITECTURE}")
        for b_set_from, b_set in levels[()].items():
            for to in sorted(b_set):
                if b_set_from in rank and to in rank and rank[to] > rank[b_set_from]:
                    failures.append(f"layer: {b_set_from} (rank {rank[b_set_from]}) imports {to} "
                                    f"(rank {rank[to]}) ({evidence[((), b_set_from, to)]})")
    for rule_src, froms, forbidden in RULES:
        if os.path.normpath(rule_src) != key:
            continue
        for (s, d), where in sorted(arrows.items()):
            if s[:1] and d[:1] and s[0] in froms and d[0] in forbidden:
                failures.append(f"rule: {s[0]}/ must not import {d[0]}/: {name(s)} -> {name(d)} ({where})")
    files = len(crate.file_module)
    print(f"{src}: {files} files, {len(crate.refs)} paths read, {len(arrows)} arrows between files, "
          f"{len(levels)} modules whose children were checked for cycles"
          + (f", {len(crate.children.get((), ()))} top-level modules against {len(order)} layers"
             if order else "")
          + f", {sum(1 for r in RULES if os.path.normpath(r[0]) == key)} named rules")
    for u in crate.unreached:
        print(f"{src}: note: {u} is reached by no mod declaration (not checked)")
    for f in failures:
        print(f"{src}: FAIL {f}")
    print(f"{src}: {'ok' if not failures else str(len(failures)) + ' failure(s)'}")
    return failures


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(os.path.dirname(here))
    dirs = argv or DEFAULT_DIRS
    failed = 0
    for d in dirs:
        if not os.path.isdir(d):
            print(f"{d}: no such folder", file=sys.stderr)
            return 2
        failed += len(check(d))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
