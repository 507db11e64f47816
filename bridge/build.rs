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
//! It also names the target triple to the crate's examples (`BENCH_HOST_TRIPLE`): the
//! bench looks for the binary of `cargo static-bridge` (`.cargo/config.toml`) there.

fn main() {
    // Cargo also sets this variable when it runs the tests, so its name must not start with
    // MCP_BRIDGE_: the sign-in tests check that no such variable reaches the browser opener.
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=BENCH_HOST_TRIPLE={target}");
    println!("cargo:rerun-if-env-changed=MCP_BRIDGE_NO_RELR");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let off = std::env::var_os("MCP_BRIDGE_NO_RELR").is_some_and(|v| v == "1");
    if os == "linux" && env == "gnu" && !off {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
