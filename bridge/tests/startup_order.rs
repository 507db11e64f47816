//! Issue 15: on Linux with glibc the binary holds the code of its start in front of the rest
//! (`link/startup-order.ld`, passed by `build.rs`), so that an idle bridge maps few windows of
//! code. The figure itself is the bench's (idle memory); this checks that the layout is there.

use object::{Object, ObjectSection};

#[test]
fn issue15_the_code_of_the_start_comes_before_the_rest_of_the_code() {
    if env!("BRIDGE_LINKED_STARTUP_ORDER") != "1" {
        return; // Not Linux with glibc, or MCP_BRIDGE_NO_STARTUP_ORDER=1: no such section.
    }
    let path = env!("CARGO_BIN_EXE_mcp-bridge-vscode");
    let bytes = std::fs::read(path).expect("read the bridge binary");
    let elf = object::File::parse(&*bytes).expect("parse the bridge binary");
    let ordered = elf
        .section_by_name(".text.startup_order")
        .expect("a section .text.startup_order");
    let text = elf.section_by_name(".text").expect("a section .text");
    // The script names functions of this crate, of std and of its dependencies; even a debug
    // build, whose code differs, holds many of them.
    assert!(
        ordered.size() > 64 * 1024,
        "only {} bytes of code matched link/startup-order.ld",
        ordered.size()
    );
    assert!(
        ordered.address() + ordered.size() <= text.address(),
        ".text.startup_order must come before .text"
    );
}
