//! What the tests know of the fixture (`bridge-fixture-server`) before they start it: its tool
//! list. The list is `harness/src/fixture_tools.in`, in the harness crate because the harness
//! cannot depend on the fixture crate (the fixture's tests depend on the harness) and its
//! published package builds only from its own files; the fixture's discovery test keeps the
//! file equal to what `tools/list` answers, and the tests of the harness and of the bridge
//! read the list from here.

/// Every tool of the fixture without `--many-tools` and `--conformance`, in the order of its
/// `tools/list`, with whether it has `annotations.readOnlyHint: true`.
pub const TOOLS: &[(&str, bool)] = &include!("fixture_tools.in");

/// The names of [`TOOLS`], in their order.
pub fn tool_names() -> impl Iterator<Item = &'static str> {
    TOOLS.iter().map(|(name, _)| *name)
}
