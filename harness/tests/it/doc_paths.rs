//! The docs name only what exists: every repository path and every `a::b::c` Rust path that a
//! `*.md` file of the repository names, in backticks, in a link or in a file tree, is looked up
//! (docs/architecture.md, principle 11: the repository explains itself, and a doc that names a
//! file or an item that is gone says something false).
//!
//! What counts as a repository path: a name with a `/` whose last part has a file extension, or
//! that starts with a folder of the repository (`src/…`, `ci/…`, `docs/`), and the target of a
//! Markdown link. It is looked up from the folder of the `.md` file, from the root and from each
//! crate's folder (`src/front/order.rs` in bridge/README.md), with `{a,b}` expanded and `*`
//! matched. Names outside the repository (`../shared/…`, URLs, `/mcp`) are not checked. A Rust
//! path counts when its first part is a crate of the workspace or a top-level module of one (of
//! its sources or of its integration tests, `tests/it`); its
//! modules are followed to a file, and each later part must be defined there (an item, a
//! variant, a method, a re-export). A first part that is an outside crate (`tokio::…`) is not
//! checked unless it is also a module of the workspace and resolves there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

const CRATES: [(&str, &str); 3] = [
    ("mcp_bridge_vscode", "bridge"),
    ("harness", "harness"),
    ("bridge_fixture_server", "fixture-server"),
];

/// The file extensions of a repository path.
const EXTENSIONS: [&str; 16] = [
    "rs", "md", "sh", "py", "toml", "json", "jsonl", "txt", "yml", "yaml", "crt", "pem", "js",
    "mjs", "ts", "lock",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every `*.md` file of the repository (not build output, not installed peers).
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && !["target", "node_modules"].contains(&name.as_str()) {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// `a{b,c}d` as `abd`, `acd` (one level, as the docs write it).
fn expand(text: &str) -> Vec<String> {
    match (text.find('{'), text.find('}')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close]
            .split(',')
            .flat_map(|part| expand(&format!("{}{part}{}", &text[..open], &text[close + 1..])))
            .collect(),
        _ => vec![text.to_string()],
    }
}

/// Whether a path (maybe with `*` in any part) names something under `base`.
fn exists_under(base: &Path, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    let Some((first, rest)) = path.split_once('/').or(Some((path, ""))) else {
        return false;
    };
    if !first.contains('*') {
        let next = base.join(first);
        return if rest.is_empty() {
            next.exists()
        } else {
            exists_under(&next, rest)
        };
    }
    let pattern = Regex::new(&format!("^{}$", regex::escape(first).replace(r"\*", ".*"))).unwrap();
    std::fs::read_dir(base).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            pattern.is_match(&e.file_name().to_string_lossy())
                && (rest.is_empty() || exists_under(&e.path(), rest))
        })
    })
}

fn top_folders(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for base in
        std::iter::once(root.to_path_buf()).chain(CRATES.iter().map(|(_, dir)| root.join(dir)))
    {
        for entry in std::fs::read_dir(&base).unwrap().flatten() {
            if entry.path().is_dir() {
                out.insert(entry.file_name().to_string_lossy().to_string());
            }
        }
    }
    out.remove("target");
    out
}

/// Whether `text` is a repository path by its shape (see the module's doc).
fn looks_like_a_path(text: &str, folders: &BTreeSet<String>) -> bool {
    // Outside the repository: URLs, paths of a server (`/mcp`), the specs beside it, and the
    // files of a user's workspace (`.vscode/mcp.json`).
    if text.contains("://")
        || text.starts_with('/')
        || text.starts_with("../shared")
        || text.starts_with(".vscode/")
    {
        return false;
    }
    if !text.contains('/') || text.contains(char::is_whitespace) || text.contains('<') {
        return false;
    }
    if !text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/{},*".contains(c))
    {
        return false;
    }
    let first = text
        .trim_start_matches("./")
        .split('/')
        .next()
        .unwrap_or("");
    let last = text.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let extension = last.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    folders.contains(first)
        || first == ".."
        || EXTENSIONS
            .iter()
            .any(|e| extension == *e || extension.ends_with(&format!("{e}}}")))
}

fn path_exists(md: &Path, root: &Path, path: &str) -> bool {
    // A crate's docs name its files from the crate (`src/front/order.rs`), from its sources
    // (`front/order.rs`), its tests (`it/stop.rs`) or its examples (`bench/url.rs`).
    let bases: Vec<PathBuf> = [md.parent().unwrap().to_path_buf(), root.to_path_buf()]
        .into_iter()
        .chain(CRATES.iter().flat_map(|(_, dir)| {
            ["", "src", "tests", "tests/it", "examples"].map(|sub| root.join(dir).join(sub))
        }))
        .collect();
    expand(path)
        .iter()
        .all(|p| bases.iter().any(|base| exists_under(base, p)))
}

/// The file of module `parts` under a crate's `src`, and how many parts were modules.
fn module_file(src: &Path, parts: &[&str]) -> Option<(PathBuf, usize)> {
    let roots = [src.join("lib.rs"), src.join("main.rs")];
    let mut file = roots.into_iter().find(|f| f.exists())?;
    let mut dir = src.to_path_buf();
    let mut used = 0;
    for part in parts {
        let (as_file, as_dir) = (
            dir.join(format!("{part}.rs")),
            dir.join(part).join("mod.rs"),
        );
        let declared = Regex::new(&format!(r"\bmod\s+{part}\s*[;{{]")).unwrap();
        if !declared.is_match(&std::fs::read_to_string(&file).ok()?) {
            break;
        }
        file = if as_file.exists() { as_file } else { as_dir };
        dir = dir.join(part);
        used += 1;
    }
    Some((file, used))
}

/// Whether `name` is defined in `text`: an item, a variant or field, a method, a re-export.
fn defines(text: &str, name: &str) -> bool {
    let name = regex::escape(name);
    let item = format!(
        r"\b(fn|struct|enum|trait|type|const|static|mod|union)\s+{name}\b|macro_rules!\s*{name}\b"
    );
    let variant_or_field =
        format!(r"(?m)^\s*(pub(\([^)]*\))?\s+)?{name}\s*[,({{:=]|^\s*{name}\s*$");
    let reexport = format!(r"\buse\s[^;]*\b{name}\b[^;]*;");
    [item, variant_or_field, reexport]
        .iter()
        .any(|pattern| Regex::new(pattern).unwrap().is_match(text))
}

/// `Ok(true)`: found; `Ok(false)`: not a path of the workspace; `Err`: named but missing.
fn rust_path_exists(root: &Path, path: &str) -> Result<bool, String> {
    let parts: Vec<&str> = path.split("::").collect();
    let mut candidates = Vec::new();
    // The sources of each crate, and its integration tests (`older::a_test_name`).
    for (name, dir) in CRATES {
        for src in [root.join(dir).join("src"), root.join(dir).join("tests/it")] {
            if parts[0] == name {
                candidates.push((src, &parts[1..]));
            } else if module_file(&src, &parts[..1]).is_some_and(|(_, used)| used == 1) {
                candidates.push((src, &parts[..]));
            }
        }
    }
    if candidates.is_empty() {
        return Ok(false);
    }
    for (src, rest) in &candidates {
        let Some((file, used)) = module_file(src, rest) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        // A re-export (`pub use self::client::describe`) makes the item a part of this module;
        // the later parts (a method, a variant) are looked up in the whole module's folder.
        let folder_text = if file.ends_with("mod.rs") {
            module_folder_text(file.parent().unwrap())
        } else {
            text.clone()
        };
        let items = &rest[used..];
        if items.is_empty()
            || (defines(&text, items[0]) && items[1..].iter().all(|i| defines(&folder_text, i)))
        {
            return Ok(true);
        }
    }
    Err(format!("{path} names nothing of the workspace"))
}

fn module_folder_text(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|e| e == "rs") {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    text
}

/// The names of the file-tree blocks: a line `src/front/  what it holds` gives the folder,
/// its indented lines `  order.rs  …` the files in it.
fn tree_paths(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut folder: Option<String> = None;
    let entry = Regex::new(r"^( *)([A-Za-z0-9_.\-/{},]+(/|\.[a-z]+))( {2,}|$)").unwrap();
    for line in block.lines() {
        let Some(m) = entry.captures(line) else {
            continue;
        };
        let (indent, name) = (m[1].len(), m[2].to_string());
        if indent == 0 && name.contains('/') {
            folder = name.ends_with('/').then(|| name.clone());
            out.push(name);
        } else if indent == 2
            && let Some(folder) = &folder
        {
            out.push(format!("{folder}{name}"));
        }
    }
    out
}

fn heading_anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        if let Some(heading) = line.strip_prefix('#').filter(|_| !fenced) {
            let title = heading.trim_start_matches('#').trim();
            let slug: String = title
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            out.insert(slug);
        }
    }
    out
}

/// The problems of one `.md` file.
fn problems_of(md: &Path, root: &Path, folders: &BTreeSet<String>) -> Vec<String> {
    let text = std::fs::read_to_string(md).unwrap();
    let mut names: Vec<(usize, String)> = Vec::new();
    let code = Regex::new(r"`([^`\n]+)`").unwrap();
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut fenced: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            match fenced.take() {
                Some(block) => names.extend(tree_paths(&block).into_iter().map(|p| (n, p))),
                None => fenced = Some(String::new()),
            }
            continue;
        }
        if let Some(block) = &mut fenced {
            block.push_str(line);
            block.push('\n');
            continue;
        }
        for m in code.captures_iter(line) {
            names.push((n + 1, m[1].to_string()));
        }
        for m in link.captures_iter(line) {
            names.push((n + 1, format!("link:{}", &m[1])));
        }
    }
    let rust_path = Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+$").unwrap();
    let mut problems = Vec::new();
    let shown = md.strip_prefix(root).unwrap().display().to_string();
    for (line, name) in names {
        if let Some(target) = name.strip_prefix("link:") {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let linked = if file.is_empty() {
                md.to_path_buf()
            } else {
                md.parent().unwrap().join(file)
            };
            if file.starts_with("../../shared") || file.contains("../shared/") {
                continue;
            }
            if !linked.exists() {
                problems.push(format!("{shown}:{line}: the link {target} names no file"));
            } else if !anchor.is_empty()
                && linked.extension().is_some_and(|e| e == "md")
                && !heading_anchors(&std::fs::read_to_string(&linked).unwrap()).contains(anchor)
            {
                problems.push(format!(
                    "{shown}:{line}: the link {target} names no heading"
                ));
            }
            continue;
        }
        let name = name.trim_end_matches("()").to_string();
        if rust_path.is_match(&name) {
            if let Err(why) = rust_path_exists(root, &name) {
                problems.push(format!("{shown}:{line}: {why}"));
            }
        } else if looks_like_a_path(&name, folders) && !path_exists(md, root, &name) {
            problems.push(format!(
                "{shown}:{line}: the path {name} is not in the repository"
            ));
        }
    }
    problems
}

#[test]
fn every_path_that_the_docs_name_exists() {
    let root = root();
    let folders = top_folders(&root);
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    files.sort();
    assert!(files.len() > 10, "the docs are missing: {files:?}");
    let problems: Vec<String> = files
        .iter()
        .flat_map(|md| problems_of(md, &root, &folders))
        .collect();
    assert!(
        problems.is_empty(),
        "{} names in the docs that do not exist:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_doc_path_check_finds_what_is_missing() {
    let root = root();
    let folders = top_folders(&root);
    assert!(path_exists(
        &root.join("docs/x.md"),
        &root,
        "ci/{test,setup}.sh"
    ));
    assert!(!path_exists(
        &root.join("docs/x.md"),
        &root,
        "ci/{test,gone}.sh"
    ));
    assert!(looks_like_a_path("src/front/order.rs", &folders));
    assert!(!looks_like_a_path("tools/call", &folders));
    assert_eq!(rust_path_exists(&root, "tokio::spawn"), Ok(false));
    assert_eq!(
        rust_path_exists(&root, "mcp_bridge_vscode::run_cli"),
        Ok(true)
    );
    assert!(rust_path_exists(&root, "mcp_bridge_vscode::gone_fn").is_err());
    assert!(rust_path_exists(&root, "wire::no_such_module_item").is_err());
    assert_eq!(
        tree_paths("src/front/   the face\n  order.rs    the order\n    deeper   text\n"),
        vec!["src/front/".to_string(), "src/front/order.rs".to_string()]
    );
}
