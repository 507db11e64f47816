//! Link options of the `mcp-bridge-vscode` binary (never of the library, its tests or
//! examples).
//!
//! On Linux with glibc the binary is linked with packed relative relocations (RELR,
//! `-z pack-relative-relocs`, GNU ld 2.38 and lld 15 or later; glibc 2.36 or later runs
//! them). A position-independent Rust binary holds tens of thousands of relative
//! relocations; as RELA entries the loader reads about 600 KB of them at every start, and
//! those pages stay resident for the life of the process. Packed, they take a few KB, so an
//! idle bridge is about 0.4 MB smaller and starts with less work. `MCP_BRIDGE_NO_RELR=1`
//! turns this off for a toolchain that predates it.
//!
//! It is also linked with `link/startup-order.ld`, a linker script that puts the code the
//! bridge runs from its start to idle (then the code of a call) side by side at the front of
//! its code, in an output section `.text.startup_order`. The kernel maps an executable's code
//! in windows of 64 KiB around each page that runs, and the start of a bridge runs about
//! 600 KB of code spread over the whole 9.6 MB: 72 windows, 3.5 MB resident while idle. Side
//! by side they are 27 windows and 1.3 MB, and an idle bridge takes 2.6 MB instead of 4.9 MB
//! (a hot-path choice of bridge/README.md). The script only orders sections: a name it no longer finds (after an update of
//! the toolchain or of a dependency) changes the layout, never the program. GNU ld and lld
//! both read it. `examples/startup_order.rs` writes it; `MCP_BRIDGE_NO_STARTUP_ORDER=1`
//! leaves it out.
//!
//! It also names the target triple to the crate's examples (`BENCH_HOST_TRIPLE`): the
//! bench looks for the binary of `cargo static-bridge` (`.cargo/config.toml`) there.

fn main() {
    // Cargo also sets this variable when it runs the tests, so its name must not start with
    // MCP_BRIDGE_: the sign-in tests check that no such variable reaches the browser opener.
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=BENCH_HOST_TRIPLE={target}");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let linux_gnu = os == "linux" && env == "gnu";
    if linux_gnu && !opted_out("MCP_BRIDGE_NO_RELR") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=link/startup-order.ld");
    let ordered = linux_gnu && !opted_out("MCP_BRIDGE_NO_STARTUP_ORDER");
    if ordered {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{dir}/link/startup-order.ld");
    }
    // For tests/startup_order.rs: whether the binary has the section.
    println!(
        "cargo:rustc-env=BRIDGE_LINKED_STARTUP_ORDER={}",
        u8::from(ordered)
    );
}

/// Whether the builder set `name` to 1 to leave a link option out (the build runs again when
/// it changes).
fn opted_out(name: &str) -> bool {
    println!("cargo:rerun-if-env-changed={name}");
    std::env::var_os(name).is_some_and(|v| v == "1")
}
