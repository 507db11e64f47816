//! The success frame of a response (the error frames come from the error table,
//! [`crate::errors`]).

use serde_json::{Value, json};

use super::lazy::Body;
use super::out::{Frame, FrameBuf};

/// A complete result frame.
pub fn result_frame(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The line of [`result_frame`] written straight from a result whose members may still be
/// the bytes received (a hot-path choice of bridge/README.md): no value of the whole frame is built.
pub fn result_line(id: &Value, result: &Body) -> Frame {
    // The envelope, an id of up to 20 digits and the `\n`: the buffer never grows.
    let mut out = FrameBuf::with_capacity(64 + result.copied_len());
    out.push(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.push_value(id);
    out.push(b",\"result\":");
    result.write(&mut out);
    out.push(b"}");
    out.into_line()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::lazy::LazyObject;

    #[test]
    fn the_line_of_a_result_is_the_result_frame() {
        let result = json!({"content":[{"type":"text","text":"é\"\n"}],"b":null});
        let map = result.as_object().cloned().unwrap_or_default();
        for id in [json!(7), json!("r-1"), json!(u64::MAX)] {
            let mut expected =
                serde_json::to_vec(&result_frame(id.clone(), result.clone())).unwrap_or_default();
            expected.push(b'\n');
            let body = Body::Object(LazyObject::from(map.clone()));
            assert_eq!(result_line(&id, &body).to_vec(), expected);
            assert_eq!(
                result_line(&id, &Body::Value(result.clone())).to_vec(),
                expected
            );
        }
    }
}
