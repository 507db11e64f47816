//! The success frame of a response (the error frames come from the error table,
//! [`crate::translate::errors`]).

use serde_json::{Value, json};

/// A complete result frame.
pub fn result_frame(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}
