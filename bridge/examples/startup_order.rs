//! Writes `bridge/link/startup-order.ld`, the linker script that puts the code a bridge runs
//! from its start to idle side by side at the front of its code (issue 15; why: `build.rs`).
//!
//! ```text
//! cargo release-bridge && cargo build --release -p bridge-fixture-server
//! cargo run --release -p mcp-bridge-vscode --example startup_order [-- BRIDGE FIXTURE]
//! ```
//!
//! It runs the bridge under valgrind's callgrind in front of the fixture, takes the functions
//! that run up to the answer of a `ping` after `initialize` (the start), then those of a
//! `tools/list` and a `tools/call` (serving), and names the sections that hold them, in that
//! order. Needs `valgrind` (symbols are read with the `object` crate). Run it again after an update of the toolchain or
//! of a dependency, or a change of the start; the bench's idle figure shows when it is due.
//!
//! A section of Rust code is named after its function's mangled symbol. Each is written twice:
//! exactly, then with the parts that change with the toolchain and the dependencies as
//! wildcards (the hash of a legacy symbol, the crate disambiguators of a v0 symbol), so that
//! the order still mostly holds after such an update. Functions of the C library linked into a
//! static bridge are named by their archive member, whose sections have no function names.

use std::collections::{BTreeMap, HashSet};
use std::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSymbol, SymbolKind};

type Res<T> = Result<T, Box<dyn Error>>;

/// The section patterns of the script. Within one input section description the linker keeps
/// the order of its input files, whatever the order of the patterns; so each phase (the start,
/// then serving) has its own descriptions, and the start comes first whole.
#[derive(Default)]
struct Patterns {
    /// For each phase: its sections named exactly, then its members of the C library.
    phases: Vec<(Vec<String>, Vec<String>)>,
    /// Every function again with wildcards, after all phases.
    wild: Vec<String>,
    seen: HashSet<String>,
}

impl Patterns {
    fn push(list: &mut Vec<String>, seen: &mut HashSet<String>, p: String) {
        if seen.insert(p.clone()) {
            list.push(p);
        }
    }

    fn add_phase(&mut self, names: &[&str], libc: &BTreeMap<String, String>) {
        let (mut exact, mut members) = (Vec::new(), Vec::new());
        for name in names {
            if let Some(member) = libc.get(*name) {
                // With the member, its variants for other processors (`strcmp.o` selects
                // one of `strcmp-avx2.o`, `strcmp-evex.o`, …): valgrind's processor is not
                // the real one, so it may run another variant than a real start.
                let stem = member.strip_suffix(".o").unwrap_or(member);
                for m in [member.clone(), format!("{stem}-*.o")] {
                    let p = format!("*libc.a:{m}(.text .text.*)");
                    Self::push(&mut members, &mut self.seen, p);
                }
                continue;
            }
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.$".contains(c))
            {
                continue; // Not a name a section pattern can hold.
            }
            let wild = wildcard(name);
            // LLVM puts a function it knows is cold (`#[cold]`) in `.text.unlikely.<name>`.
            for prefix in [".text.", ".text.unlikely."] {
                Self::push(&mut exact, &mut self.seen, format!("{prefix}{name}"));
                Self::push(&mut self.wild, &mut self.seen, format!("{prefix}{wild}"));
            }
        }
        self.phases.push((exact, members));
    }
}

/// `name` with the parts that change with the toolchain or the dependencies as `*`.
fn wildcard(name: &str) -> String {
    if name.starts_with("_ZN") {
        // Legacy: `…17h<16 hex digits>E`, maybe with a suffix of LLVM (`.llvm.123`).
        if let Some(at) = name.rfind("17h") {
            let hash = &name[at + 3..];
            if hash.len() > 16 && hash.as_bytes()[16] == b'E' {
                return format!("{}17h*E*", &name[..at]);
            }
        }
    } else if name.starts_with("_R") {
        // v0: each crate root is `Cs<disambiguator>_<length><name>`.
        let mut out = String::new();
        let mut rest = name;
        while let Some(at) = rest.find("Cs") {
            let tail = &rest[at + 2..];
            let end = tail.find('_').unwrap_or(0);
            out.push_str(&rest[..at + 2]);
            if end > 0 && tail[..end].chars().all(|c| c.is_ascii_alphanumeric()) {
                out.push('*');
                rest = &tail[end..];
            } else {
                rest = tail;
            }
        }
        out.push_str(rest);
        return out;
    }
    name.to_owned()
}

fn main() -> Res<()> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = manifest.join("../target");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bridge = args.first().map(PathBuf::from).unwrap_or_else(|| {
        let triple = env!("BENCH_HOST_TRIPLE");
        target.join(triple).join("release/mcp-bridge-vscode")
    });
    let fixture = args
        .get(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("release/bridge-fixture-server"));
    let bridge = std::fs::canonicalize(&bridge)?;
    let out_dir = std::env::temp_dir().join(format!("startup-order-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir)?;
    let traced = trace(&bridge, &fixture, &out_dir).and_then(|(base, dumps)| {
        let addresses = dumps.iter().map(|d| executed(d)).collect::<Res<Vec<_>>>();
        Ok((base, addresses?))
    });
    let _ = std::fs::remove_dir_all(&out_dir);
    let (base, phases) = traced?;
    let symbols = text_symbols(&bridge)?;
    let libc = libc_members()?;
    let mut patterns = Patterns::default();
    let mut functions = 0;
    for addresses in &phases {
        let names = containing(&symbols, base, addresses);
        functions += names.len();
        patterns.add_phase(&names, &libc);
    }
    let script = render(&patterns);
    let path = manifest.join("link/startup-order.ld");
    std::fs::write(&path, script)?;
    println!(
        "{}: {functions} functions in {} phases, {} wildcard patterns",
        path.display(),
        patterns.phases.len(),
        patterns.wild.len(),
    );
    Ok(())
}

/// Runs the bridge under callgrind and dumps its counts at idle and after serving; returns
/// the address at which the bridge was loaded and the two dump files.
fn trace(bridge: &Path, fixture: &Path, dir: &Path) -> Res<(u64, Vec<PathBuf>)> {
    let out = dir.join("cg.out");
    let mut child = Command::new("valgrind")
        .args(["--tool=callgrind", "--dump-instr=yes", "--dump-line=no"])
        .args(["--compress-pos=no", "--compress-strings=no"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(bridge)
        .arg("--")
        .arg(fixture)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start valgrind: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    // Writes requests and reads up to the response of the last one (ids rise; notifications
    // that come in between are read past).
    let mut ask = |frame: &str, last: u64| -> Res<()> {
        stdin.write_all(frame.as_bytes())?;
        stdin.flush()?;
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line)? == 0 {
                return Err("the bridge closed its output".into());
            }
            let message: serde_json::Value = serde_json::from_str(&line)?;
            if message.get("id").and_then(serde_json::Value::as_u64) == Some(last) {
                return Ok(());
            }
        }
    };
    let pid = child.id().to_string();
    let dump = |n: usize| -> Res<PathBuf> {
        // callgrind_control returns once the dump is written.
        let ok = Command::new("callgrind_control")
            .args(["-d", &pid])
            .stdout(Stdio::null())
            .status()?
            .success();
        let file = PathBuf::from(format!("{}.{n}", out.display()));
        if ok && file.exists() {
            Ok(file)
        } else {
            Err(format!("callgrind_control wrote no {}", file.display()).into())
        }
    };
    let init = r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"order","version":"1"}}"#;
    ask(
        &format!("{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{init}}}\n"),
        0,
    )?;
    ask(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n\
         {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
        1,
    )?;
    let start = dump(1)?;
    let base = load_address(&pid, bridge)?;
    ask(
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n\
         {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}\n",
        3,
    )?;
    let serve = dump(2)?;
    drop(stdin);
    child.wait()?;
    Ok((base, vec![start, serve]))
}

/// Where the first page of `binary` is mapped in process `pid` (valgrind maps the program
/// itself, so its own mappings show it).
fn load_address(pid: &str, binary: &Path) -> Res<u64> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    let binary = binary.to_string_lossy();
    for line in maps.lines() {
        // `<start>-<end> <perms> <offset> <dev> <inode> <path>`
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 6 && f[5] == binary {
            let start = u64::from_str_radix(f[0].split('-').next().unwrap_or_default(), 16)?;
            let offset = u64::from_str_radix(f[2], 16)?;
            return start
                .checked_sub(offset)
                .ok_or_else(|| format!("a mapping of {binary} below its offset").into());
        }
    }
    Err(format!("{binary} is not mapped in process {pid}").into())
}

/// The addresses of the instructions that ran, from a dump. Its `ob=` lines do not always
/// name the bridge (a static one runs code before valgrind knows its object), so
/// [`containing`] keeps those within the bridge's functions.
fn executed(dump: &Path) -> Res<Vec<u64>> {
    let text = std::fs::read_to_string(dump)?;
    let mut addresses = Vec::new();
    for line in text.lines() {
        if let Some(hex) = line.strip_prefix("0x") {
            let hex = hex.split(' ').next().unwrap_or_default();
            addresses.push(u64::from_str_radix(hex, 16)?);
        }
    }
    Ok(addresses)
}

/// The names of the functions that hold `addresses`, in the order of their first address.
fn containing<'a>(symbols: &'a [Symbol], base: u64, addresses: &[u64]) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for &a in addresses {
        let Some(a) = a.checked_sub(base) else {
            continue;
        };
        let i = symbols.partition_point(|s| s.start <= a);
        if let Some(Symbol { name, .. }) = i
            .checked_sub(1)
            .map(|i| &symbols[i])
            .filter(|s| a < s.start + s.size.max(1))
            && seen.insert(name.as_str())
        {
            names.push(name.as_str());
        }
    }
    names
}

struct Symbol {
    start: u64,
    size: u64,
    name: String,
}

/// The functions that an object file defines, with their address and size.
fn functions(data: &[u8]) -> Res<Vec<Symbol>> {
    let file = object::File::parse(data)?;
    let mut symbols = Vec::new();
    for symbol in file.symbols() {
        if symbol.is_definition() && symbol.kind() == SymbolKind::Text {
            symbols.push(Symbol {
                start: symbol.address(),
                size: symbol.size(),
                name: symbol.name()?.to_owned(),
            });
        }
    }
    Ok(symbols)
}

/// The function symbols of an executable, sorted by address.
fn text_symbols(binary: &Path) -> Res<Vec<Symbol>> {
    let mut symbols = functions(&std::fs::read(binary)?)?;
    symbols.sort_by_key(|s| s.start);
    Ok(symbols)
}

/// The archive member of each function of the C library (glibc's `libc.a`), if there is one.
fn libc_members() -> Res<BTreeMap<String, String>> {
    let out = Command::new("cc").arg("-print-file-name=libc.a").output()?;
    let archive = String::from_utf8(out.stdout)?.trim().to_owned();
    let mut members = BTreeMap::new();
    if !Path::new(&archive).is_absolute() {
        return Ok(members);
    }
    let data = std::fs::read(&archive)?;
    for member in ArchiveFile::parse(&*data)?.members() {
        let member = member?;
        let name = String::from_utf8_lossy(member.name()).into_owned();
        // A member that is not an object file (none in glibc's archive) names no function.
        for f in functions(member.data(&*data)?).unwrap_or_default() {
            members.entry(f.name).or_insert_with(|| name.clone());
        }
    }
    Ok(members)
}

fn render(p: &Patterns) -> String {
    // Sorted, so that a new run changes only the lines that changed: the linker keeps the
    // order of its input files within a description anyway, and the members of the C library
    // are small.
    let sorted = |l: &[String]| -> Vec<String> {
        let mut l = l.to_vec();
        l.sort();
        l
    };
    let list = |l: &[String]| -> String {
        let mut s = String::from("    *(\n");
        for p in sorted(l) {
            s.push_str(&format!("      {p}\n"));
        }
        s.push_str("    )\n");
        s
    };
    let mut s = String::from(
        "/* Written by `cargo run --release -p mcp-bridge-vscode --example startup_order`:\n   \
         do not edit. The code that a bridge runs up to idle, then to serve a call, at the\n   \
         front of its code (issue 15; why: bridge/build.rs). */\nSECTIONS\n{\n  \
         .text.startup_order :\n  {\n",
    );
    for (exact, members) in &p.phases {
        s.push_str(&list(exact));
        for member in sorted(members) {
            s.push_str(&format!("    {member}\n"));
        }
    }
    s.push_str(&list(&p.wild));
    s.push_str("  }\n}\nINSERT BEFORE .text;\n");
    s
}
