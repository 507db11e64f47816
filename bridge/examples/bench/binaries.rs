//! The binaries that the bench measures: built with its own profile first, found by variable
//! or in the target folder, and out of the page cache for a cold start.

use super::*;

/// This bench's own binary, also after the build above replaced it while it runs (Linux then
/// names the running one `<path> (deleted)`, and the new one is at `<path>`).
pub(crate) fn me() -> PathBuf {
    let exe = std::env::current_exe().expect("exe");
    match exe.to_str().and_then(|p| p.strip_suffix(" (deleted)")) {
        Some(p) => PathBuf::from(p),
        None => exe,
    }
}

pub(crate) fn target_dir() -> PathBuf {
    // target/<profile>/examples/bench → target
    let exe = std::env::current_exe().expect("exe");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"))
}

/// Builds the bridge and the fixture with the bench's own profile, so that the figures are
/// those of the sources beside it (`cargo build --examples` alone builds no binary), into
/// target/<profile>/. One command for the whole workspace with its examples: the feature set
/// is then that of `cargo build --release --workspace --examples`, so this build reuses what
/// that one built (a build of one package alone unifies fewer features and would rebuild the
/// shared crates, and the next workspace build would rebuild them back). Skipped when
/// BRIDGE_BIN or BRIDGE_FIXTURE_SERVER names a binary; a build that cannot run leaves what is
/// there.
pub(crate) fn build_binaries() {
    if std::env::var_os("BRIDGE_BIN").is_some()
        || std::env::var_os("BRIDGE_FIXTURE_SERVER").is_some()
    {
        return;
    }
    let target = target_dir();
    let Some(workspace) = target.parent() else {
        return;
    };
    let exe = std::env::current_exe().expect("exe");
    let profile = exe
        .ancestors()
        .nth(2)
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
        .unwrap_or("release")
        .to_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let profile_args: &[&str] = match profile.as_str() {
        "debug" => &[],
        "release" => &["--release"],
        other => &["--profile", other],
    };
    eprintln!("building the bridge and the fixture ({profile}) …");
    let status = Command::new(&cargo)
        .current_dir(workspace)
        .args(["build", "--quiet", "--workspace", "--bins", "--examples"])
        .args(profile_args)
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => eprintln!("the build failed ({status}); measuring the binaries that exist"),
        Err(e) => eprintln!("cannot run cargo ({e}); measuring the binaries that exist"),
    }
}

pub(crate) fn find(var: &str, name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(var) {
        return PathBuf::from(p);
    }
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let target = target_dir();
    for profile in ["release", "debug"] {
        let p = target.join(profile).join(&file);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found: build it, or set {var}");
}

/// Asks the kernel to drop the cached pages of a binary that no process runs, so that the
/// idle figure counts the pages that starting it reads, as at its first start after an
/// install or a reboot. Without this it depends on how the file came into the cache: a binary
/// that the linker has just written is cached whole and in large blocks, and the kernel then
/// maps more of it around each page that the start touches (0.8 MB more for the same binary
/// on the development machine).
pub(crate) fn drop_cached_pages(binary: &Path) {
    #[cfg(target_os = "linux")]
    if let Ok(file) = std::fs::File::open(binary) {
        use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
        let _ = posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = binary;
}
