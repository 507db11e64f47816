//! `mcp-bridge-vscode secret set|list|delete` (docs/secrets.md). Exit codes: 0 when it
//! succeeded (also a `delete` with nothing to delete); 1 when no store kept or deleted the
//! secret; 2 for arguments that are not valid and for a value that is refused. `list` writes
//! its table on stdout; every other line goes to stderr. No line holds a value.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use super::args::{self, Action, BindTo, StoreChoice};
use super::kept::{Binding, Kept};
use super::resolve::is_bare;
use super::store::{FilePaths, Kind, SecretStore};
use super::value::read_value;
use crate::cli::headers::is_value;
use crate::log::{self, Level};

/// The usage of `secret`.
pub const USAGE: &str = "\
usage: mcp-bridge-vscode secret set <name> --origin <url> [--from-file <path>] [--store <store>]
       mcp-bridge-vscode secret set <name> --command <program> [--folder <dir>] [--from-file <path>] [--store <store>]
       mcp-bridge-vscode secret list [--store <store>]
       mcp-bridge-vscode secret delete <name> [--store <store>]

The value comes from a hidden prompt on a terminal, else from stdin or --from-file; never
from the command line. <store>: auto (the keychain, else encrypted files), keychain or file.
";

/// Runs `secret` with the arguments after the word `secret`; the exit code.
pub fn main(arguments: &[OsString]) -> i32 {
    let action = match args::parse(arguments) {
        Ok(action) => action,
        Err(error) => {
            log::vscode(Level::Err, &error.to_string());
            let _ = std::io::stderr().write_all(USAGE.as_bytes());
            return 2;
        }
    };
    match action {
        Action::Help => {
            let _ = std::io::stdout().write_all(USAGE.as_bytes());
            0
        }
        Action::Set {
            name,
            bind,
            from_file,
            store,
        } => set(&name, bind, from_file.as_deref(), store),
        Action::List { store } => list(store),
        Action::Delete { name, store } => delete(&name, store),
    }
}

/// The binding of `bind`: an origin, a bare program name, or the absolute path of an existing
/// program and folder (the checks of a start compare real paths).
fn binding(bind: BindTo) -> Result<Binding, String> {
    match bind {
        BindTo::Origin(url) => Ok(Binding::Origin(url.origin().ascii_serialization())),
        BindTo::Command { program, folder } => {
            let program = if is_bare(&program) {
                program
                    .into_string()
                    .map_err(|_| "the value of --command is not valid UTF-8".to_owned())?
            } else {
                real(Path::new(&program), "--command")?
            };
            let folder = folder
                .map(|f| real(&f, "--folder").map(Into::into))
                .transpose()?;
            Ok(Binding::Command { program, folder })
        }
    }
}

fn real(path: &Path, option: &str) -> Result<String, String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("the path of {option} cannot be found: {}", e.kind()))?;
    real.into_os_string()
        .into_string()
        .map_err(|_| format!("the path of {option} is not valid UTF-8"))
}

fn set(name: &str, bind: BindTo, from_file: Option<&Path>, choice: StoreChoice) -> i32 {
    let binding = match binding(bind) {
        Ok(binding) => binding,
        Err(why) => {
            log::vscode(Level::Err, &format!("secret set: {why}"));
            return 2;
        }
    };
    let value = match read_value(from_file, name) {
        Ok(value) => value,
        Err(why) => {
            log::vscode(Level::Err, &format!("secret set: {why}"));
            return 2;
        }
    };
    if matches!(binding, Binding::Origin(_)) && !is_value(&value) {
        log::vscode(
            Level::Err,
            "secret set: a header secret is one line of visible ASCII characters, spaces and tabs",
        );
        return 2;
    }
    let kept = Kept::new(binding, value);
    let mut why = Vec::new();
    for store in candidates(choice, true, &mut why) {
        match store.put(name, &kept) {
            Ok(()) => {
                // A copy in the other store would answer a start of another moment.
                forget_elsewhere(name, store.kind);
                log::vscode(
                    Level::Info,
                    &format!(
                        "the secret {name} is kept in {} for {}",
                        store.place,
                        kept.binding.describe()
                    ),
                );
                return 0;
            }
            Err(e) => why.push(format!("{}: {e}", store.place)),
        }
    }
    log::vscode(
        Level::Err,
        &format!(
            "secret set: no store kept the secret {name}, and the bridge never keeps a secret in memory ({})",
            why.join("; ")
        ),
    );
    1
}

/// Deletes `name` from the store of the other kind, where an earlier `set` may have left it.
fn forget_elsewhere(name: &str, kept_in: Kind) {
    let other = match kept_in {
        Kind::Keychain => StoreChoice::File,
        Kind::File => StoreChoice::Keychain,
    };
    for store in candidates(other, false, &mut Vec::new()) {
        let _ = store.remove(name);
    }
}

/// The stores of `choice` that open, in order; the reasons of those that do not in `why`.
/// `make_key`: the file store makes its key when it has none (`set`).
fn candidates(choice: StoreChoice, make_key: bool, why: &mut Vec<String>) -> Vec<SecretStore> {
    let mut stores = Vec::new();
    if choice != StoreChoice::File {
        match SecretStore::keychain() {
            Ok(store) => stores.push(store),
            Err(e) => why.push(format!("the keychain is not available: {e}")),
        }
    }
    // `auto` writes into the files only when the keychain does not open.
    let files_wanted = match choice {
        StoreChoice::File => true,
        StoreChoice::Keychain => false,
        StoreChoice::Auto => !make_key || stores.is_empty(),
    };
    if files_wanted {
        match FilePaths::of_process().and_then(|paths| SecretStore::file(&paths, make_key)) {
            Ok(Some(store)) => stores.push(store),
            Ok(None) => {}
            Err(e) => why.push(format!("the file store did not open: {e}")),
        }
    }
    stores
}

fn list(choice: StoreChoice) -> i32 {
    let mut why = Vec::new();
    let stores = candidates(choice, false, &mut why);
    let mut out = String::from("NAME\tMAY GO TO\tKEPT IN\n");
    let mut failed = false;
    for store in &stores {
        let names = match store.names() {
            Ok(names) => names,
            Err(e) => {
                why.push(format!("{}: {e}", store.place));
                failed = true;
                continue;
            }
        };
        for name in names {
            let goes_to = match store.get(&name) {
                Ok(Some(kept)) => kept.binding.describe(),
                Ok(None) => "(cannot be read)".to_owned(),
                Err(e) => format!("(cannot be read: {e})"),
            };
            out.push_str(&format!("{name}\t{goes_to}\t{}\n", store.place));
        }
    }
    out.push('\n');
    for store in &stores {
        out.push_str(&seen_by_vscode(store));
        out.push('\n');
    }
    for reason in &why {
        out.push_str(&format!("not listed: {reason}\n"));
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    i32::from(failed)
}

/// Whether the bridge as VS Code starts it would see `store`: the facts that decide it.
fn seen_by_vscode(store: &SecretStore) -> String {
    match store.kind {
        Kind::Keychain => format!(
            "{}: a bridge that VS Code starts on this computer in this login session reads it; a server of a remote window (SSH, WSL, a dev container) runs on the remote host and does not",
            store.place
        ),
        Kind::File => format!(
            "{}: a bridge reads it when VS Code gives it the same {} as this shell; a server of a remote window runs on the remote host and does not",
            store.place,
            if cfg!(windows) {
                "LOCALAPPDATA"
            } else {
                "XDG_STATE_HOME and HOME"
            }
        ),
    }
}

fn delete(name: &str, choice: StoreChoice) -> i32 {
    let mut why = Vec::new();
    let stores = candidates(choice, false, &mut why);
    let mut deleted = Vec::new();
    let mut failed = false;
    for store in &stores {
        match store.remove(name) {
            Ok(true) => deleted.push(store.place.clone()),
            Ok(false) => {}
            Err(e) => {
                failed = true;
                log::vscode(
                    Level::Err,
                    &format!("secret delete failed in {}: {e}", store.place),
                );
            }
        }
    }
    if deleted.is_empty() && !failed {
        log::vscode(
            Level::Info,
            &format!("no store keeps the secret {name}: nothing to delete"),
        );
    }
    for place in deleted {
        log::vscode(
            Level::Info,
            &format!("deleted the secret {name} from {place}"),
        );
    }
    i32::from(failed)
}
