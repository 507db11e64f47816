//! The state that the requests of one session share: the options, the lists that `toggle`
//! changes, the open listen streams and the end of the session.
#![expect(
    deprecated,
    reason = "rmcp 3.11 marks logging deprecated (SEP-2577), but revision 2026-07-28 keeps the per-request log level that the fixture honours (O5)"
)]
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::LoggingLevel;
use tokio_util::sync::CancellationToken;

use crate::cli::Options;
use crate::listen::Listeners;
use crate::sync::lock;

/// The state of one session.
pub struct State {
    pub options: Options,
    pub lifecycle: Lifecycle,
    pub listeners: Listeners,
    /// Whether the tool `toggled` is in the tool list.
    pub toggled_tool: AtomicBool,
    /// Whether the prompt `toggled` is in the prompt list.
    pub toggled_prompt: AtomicBool,
    /// The level of `logging/setLevel`, used only by a session that began with `initialize`:
    /// a request of revision 2026-07-28 carries its own level in `_meta`.
    legacy_level: Mutex<Option<LoggingLevel>>,
}

impl State {
    pub fn new(options: Options) -> Self {
        Self {
            options,
            lifecycle: Lifecycle::default(),
            listeners: Listeners::default(),
            toggled_tool: AtomicBool::new(true),
            toggled_prompt: AtomicBool::new(true),
            legacy_level: Mutex::new(None),
        }
    }

    pub fn tool_enabled(&self) -> bool {
        self.toggled_tool.load(Ordering::SeqCst)
    }

    pub fn prompt_enabled(&self) -> bool {
        self.toggled_prompt.load(Ordering::SeqCst)
    }

    pub fn legacy_level(&self) -> Option<LoggingLevel> {
        *lock(&self.legacy_level)
    }

    pub fn set_legacy_level(&self, level: LoggingLevel) {
        *lock(&self.legacy_level) = Some(level);
    }
}

/// The end of the session.
#[derive(Clone, Default)]
pub struct Lifecycle {
    /// Stdin reached its end: work in flight stops at once (R7).
    pub input_closed: CancellationToken,
    /// The listen streams end with their result: at the end of stdin and after `shutdown`.
    pub stopping: CancellationToken,
}

impl Lifecycle {
    /// The end of stdin: the listen streams end, and the work in flight stops.
    pub fn input_ended(&self) {
        self.stopping.cancel();
        self.input_closed.cancel();
    }
}
