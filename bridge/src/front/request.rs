//! The task of one forwarded request (O8, O9): one upstream exchange per round, with its time
//! limit, the "still waiting" lines, progress with VS Code's own token (O4, C3), and the
//! shape of the result (R4, R5, R6).
//!
//! M2: a result with `resultType: "input_required"` goes to the input rounds
//! ([`super::rounds`]), and the request goes upstream again with the next round (R8).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::Shared;
use super::exchange::{Exchange, Upstream, exchange_body};
use super::inflight::Slot;
use super::rounds::{Next, Rounds};
use crate::auth::TokenSource;
use crate::auth::error_object::sign_in_error;
use crate::errors::{self, Cause, error_object, format_limit};
use crate::input::parse::is_input_required;
use crate::input::state::{RefusedState, is_refused_state, refused_state_response};
use crate::input::texts;
use crate::log::{self, Level};
use crate::translate::forward::{ForwardKind, forward_object};
use crate::translate::icons::keep_data_icons;
use crate::translate::schema::FixKind;
use crate::translate::shape::{ResultKind, kind_of, result_kind, shape_object, shape_result};
use crate::upstream::UpstreamError;
use crate::upstream::client::{RequestOptions, UpstreamClient};
use crate::upstream::dialect::Dialect;
use crate::wire::lazy::{Body, LazyObject};

/// The error object of a failed upstream request of a forwarded request (of either revision).
pub(crate) fn error_of(error: UpstreamError) -> Value {
    match error {
        UpstreamError::Rpc(e) | UpstreamError::Refused { error: e, .. } => {
            errors::upstream_error(e)
        }
        // A stdio upstream that closed its output is gone for good.
        UpstreamError::Closed => error_object(Cause::UpstreamExited, None),
        UpstreamError::InvalidResponse(why) => error_object(Cause::InvalidResponse, Some(&why)),
        // Only a listen stream ends this way (M3).
        UpstreamError::Ended => error_object(Cause::TaskCancelled, None),
        UpstreamError::TransportFailed(why) => error_object(Cause::TransportFailed, Some(&why)),
        UpstreamError::HttpStatus(status) => error_object(
            Cause::InvalidResponse,
            Some(&format!("HTTP status {status}")),
        ),
        UpstreamError::SignIn(e) => sign_in_error(&e),
    }
}

/// The task of a forwarded request: the round loop of R8. Each
/// `InputRequiredResult` is answered by VS Code through the input rounds ([`Rounds`]) and the
/// request goes upstream again, until a complete result, an error or a limit (R8: VS Code
/// never sees `input_required`). Progress of every round reaches VS Code with its token.
pub(crate) async fn run_forward(
    shared: Arc<Shared>,
    slot: Slot,
    kind: ForwardKind,
    params: Option<LazyObject>,
    upstream: Arc<UpstreamClient>,
) {
    let older = upstream.dialect() == Dialect::Older;
    let (params, opts, progress_token) = if older {
        // L2: VS Code's params as received; only the progress token is the bridge's.
        let params = params.unwrap_or_default();
        let token = crate::translate::older::progress_token(&params);
        let opts = RequestOptions {
            progress: token.is_some(),
            ..RequestOptions::default()
        };
        (params, opts, token)
    } else {
        // R3, C3: the parts of VS Code's params.
        let fwd = forward_object(params.unwrap_or_default());
        let opts = RequestOptions {
            log_level: shared.log_level(),
            progress: fwd.progress_token.is_some(),
            meta: fwd.meta,
            stream: false,
        };
        (fwd.params, opts, fwd.progress_token)
    };
    let method = slot.method.clone();
    let mut rounds = Rounds::new(upstream.capabilities());
    // The params of a retry (R8); the first round sends VS Code's params (a copy of the
    // list of members: raw members share the bytes of the line), which the rounds keep for
    // their retries.
    let mut retry: Option<Map<String, Value>> = None;
    let remote = shared.opts.upstream.is_remote();
    let mut round = 0u32;
    let response = loop {
        let timeout = kind.timeout_for_round(round);
        let request = Upstream {
            client: &upstream,
            method: &method,
            params: retry
                .take()
                .map_or(Cow::Borrowed(&params), |p| Cow::Owned(p.into())),
            opts: &opts,
            progress_token: progress_token.as_ref(),
            timeout,
            round: round + 1,
            // M4: a sign-in of the request adds its own time limit.
            extension: shared.opts.sign_in.as_ref().map(TokenSource::wait),
        };
        let outcome = exchange_body(&shared, &slot, request).await;
        let body = match outcome {
            Exchange::Cancelled => break None,
            Exchange::TimedOut => break Some(Err(timed_out(&slot, timeout))),
            Exchange::Done(Err(e))
                if e.rpc()
                    .is_some_and(|e| is_refused_state(rounds.carried_state, e)) =>
            {
                let e = e.rpc().cloned().unwrap_or_default();
                break Some(refused_state(&slot, &e, rounds.input_wait).map(Body::Value));
            }
            Exchange::Done(Err(e)) => break Some(Err(error_of(e))),
            Exchange::Done(Ok(body)) => body,
        };
        let raw = match body {
            // The pass-through (a hot-path choice of bridge/README.md): a complete result whose members no rule walks
            // whole goes out with its members as received. A complete result asks for no
            // URL, so the rounds see it as `null`.
            Body::Object(object) if !remote => match pass_through(&method, object) {
                Ok(shaped) => {
                    rounds.observe(&shared, &Value::Null);
                    break Some(Ok(Body::Object(shaped)));
                }
                Err(object) => Value::Object(object.into_map()),
            },
            other => other.into_value(),
        };
        rounds.observe(&shared, &raw);
        // L2: an older server has no input rounds; its `input_required` is not valid.
        if older || !is_input_required(&raw) {
            let mut raw = raw;
            if method == "tools/list" {
                upstream.tools_listed(&mut raw);
            }
            let mut response = complete(&method, raw);
            if let Ok(result) = response.as_mut()
                && shared.opts.upstream.is_remote()
            {
                keep_data_icons(&method, result);
            }
            break Some(response.map(Body::Value));
        }
        let original = params.to_map();
        // Boxed: the rounds are rare, and their state inline would make the future of
        // every request larger, and every request moves it into its task (a hot-path choice of bridge/README.md).
        match Box::pin(rounds.round(&shared, &slot, &original, &raw)).await {
            Next::Retry(params) => retry = Some(params),
            Next::Respond(r) => break Some(r.map(Body::Value)),
            Next::Cancelled => break None,
        }
        round += 1;
    };
    rounds.finish(&shared);
    if let Some(response) = response {
        shared.respond_body(&slot, response);
    }
}

/// A complete result shaped without a full parse; anything else (input rounds, a kind that is
/// not known, a rule that walks the whole result) comes back for the full path.
fn pass_through(method: &str, object: LazyObject) -> Result<LazyObject, LazyObject> {
    if kind_of(object.get_value("resultType").as_deref()) != ResultKind::Complete {
        return Err(object);
    }
    shape_object(method, object)
}

/// No upstream response in the time limit of the round.
pub(crate) fn timed_out(slot: &Slot, timeout: Duration) -> Value {
    let limit = format_limit(timeout);
    let method = &slot.method;
    log::bridge(
        Level::Warn,
        &format!("request {} ({method}): no response in {limit}", slot.id),
    );
    error_object(
        Cause::Timeout,
        Some(&format!("{method}: no response in {limit}")),
    )
}

/// The upstream refused the `requestState` of a retry: the texts of the reference (a
/// tool result with `isError` for `tools/call`, so that the model reads it; an error else).
fn refused_state(slot: &Slot, error: &Value, waited: Duration) -> Result<Value, Value> {
    log::bridge(
        Level::Warn,
        &texts::refused_state_log(&slot.method, &slot.id, waited),
    );
    match refused_state_response(&slot.method, error) {
        RefusedState::Result(r) => Ok(r),
        RefusedState::Error(e) => Err(e),
    }
}

/// A complete result goes to VS Code in its 2025-11-25 shape.
pub(crate) fn complete(method: &str, raw: Value) -> Result<Value, Value> {
    match result_kind(&raw) {
        ResultKind::Complete => {}
        // The round loop takes every input_required result before this point.
        ResultKind::InputRequired => {
            return Err(error_object(
                Cause::InvalidResponse,
                Some(&format!(
                    "{method}: an input_required result outside the rounds"
                )),
            ));
        }
        ResultKind::Unknown(kind) => {
            return Err(error_object(
                Cause::InvalidResponse,
                Some(&format!("{method}: the result type {kind} is not known")),
            ));
        }
    }
    let Some((result, fixes)) = shape_result(method, raw) else {
        return Err(error_object(
            Cause::InvalidResponse,
            Some(&format!("{method}: the result is not an object")),
        ));
    };
    for fix in fixes {
        let text = match fix.fix.kind {
            FixKind::ItemsAdded | FixKind::ItemsFalseReplaced => {
                format!(
                    "tool '{}': added an items schema at '{}' of the input schema",
                    fix.tool, fix.fix.pointer
                )
            }
            FixKind::TooDeep => format!(
                "tool '{}': the input schema at '{}' is too deep to examine",
                fix.tool, fix.fix.pointer
            ),
        };
        log::bridge(Level::Info, &text);
    }
    Ok(result)
}

/// O4: the progress of the upstream server with VS Code's token; only the members of
/// 2025-11-25 progress (no `_meta`).
pub fn progress_frame(token: &Value, upstream: &Value) -> Value {
    let mut params = Map::new();
    params.insert("progressToken".into(), token.clone());
    for key in ["progress", "total", "message"] {
        if let Some(v) = upstream.get(key) {
            params.insert(key.into(), v.clone());
        }
    }
    json!({"jsonrpc":"2.0","method":"notifications/progress","params":params})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o4_c3_progress_uses_the_token_of_vscode() {
        let up = json!({"progressToken":17,"progress":1,"total":3,"message":"Step 1 of 3","_meta":{"x":1}});
        assert_eq!(
            progress_frame(&json!(0), &up),
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1,"total":3,"message":"Step 1 of 3"}})
        );
        let uuid = json!("3f1c2e0a-8d0b-4f7e-9a51-6c2d1b7e9f10");
        assert_eq!(
            progress_frame(&uuid, &json!({"progress":0.5}))["params"],
            json!({"progressToken":uuid,"progress":0.5})
        );
    }

    #[test]
    fn upstream_failures_map_to_the_table() {
        assert_eq!(
            error_of(UpstreamError::Closed)["data"]["cause"],
            "upstream_exited"
        );
        assert_eq!(error_of(UpstreamError::Closed)["code"], -32603);
        assert_eq!(
            error_of(UpstreamError::InvalidResponse("x".into()))["data"],
            json!({"cause":"invalid_response","detail":"x"})
        );
        assert_eq!(
            error_of(UpstreamError::Rpc(json!({"code":-32602,"message":"m"}))),
            json!({"code":-32602,"message":"m"})
        );
        assert_eq!(
            error_of(UpstreamError::Rpc(
                json!({"code":-32042,"message":"m","data":{}})
            )),
            json!({"code":-32603,"message":"m"})
        );
    }

    #[test]
    fn r8_result_types_outside_the_rounds() {
        let e = complete(
            "tools/call",
            json!({"resultType":"input_required","inputRequests":{}}),
        )
        .err();
        assert_eq!(
            e.map(|e| e["data"]["cause"].clone()),
            Some(json!("invalid_response"))
        );
        let e = complete("tools/call", json!({"resultType":"task"})).err();
        assert_eq!(
            e.map(|e| e["data"]["cause"].clone()),
            Some(json!("invalid_response"))
        );
        let e = complete("tools/call", json!([1])).err();
        assert_eq!(
            e.map(|e| e["data"]["cause"].clone()),
            Some(json!("invalid_response"))
        );
        assert_eq!(
            complete("tools/call", json!({})).ok(),
            Some(json!({"content":[]}))
        );
    }
}
