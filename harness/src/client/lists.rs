//! VS Code's lists in the client simulator: the pages of a list (R4), the lists again after a
//! list change (O6) or after a failed call, what VS Code keeps of a list (R6), and the checks
//! of a `list` step.
use super::*;

/// Whether VS Code lists again after a call that failed with `error`: not when the bridge
/// says that the upstream process stopped (`upstream_exited`), because the bridge exits with
/// code 1 right after and VS Code shows the server as stopped. A list change that came
/// before such an error (M3: the gap replay of the listen stream) then starts no list request
/// on a closed stdout.
pub fn relists_after(error: &Value) -> bool {
    error.pointer("/data/cause") != Some(&json!("upstream_exited"))
}

/// VS Code lists again after a list change.
pub(super) async fn relist(s: &mut Session, deadline: Instant) -> Result<(), Failure> {
    let mut rounds = 0;
    while s.sim.tools_changed || s.sim.prompts_changed {
        rounds += 1;
        if rounds > PAGE_CAP {
            return Err(Failure::msg("O6: list changes without end"));
        }
        let bound = deadline.saturating_duration_since(Instant::now());
        if s.sim.prompts_changed {
            s.sim.prompts_changed = false;
            list(s, "prompts", bound).await?;
        }
        if s.sim.tools_changed {
            s.sim.tools_changed = false;
            list(s, "tools", bound).await?;
        }
    }
    Ok(())
}

pub(super) fn store(s: &mut Session, kind: &str, items: Vec<Value>) {
    match kind {
        "tools" => {
            // VS Code's view of the list (R6 a): what it would omit, and why (--verbose).
            for (name, why) in crate::vscode::omitted_tools(&items) {
                s.note(format!("VS Code would omit the tool {name}: {why}"));
            }
            s.sim.tools = items;
        }
        "prompts" => s.sim.prompts = items,
        _ => {}
    }
}

/// A full list with VS Code's pagination.
pub(super) async fn list(
    s: &mut Session,
    what: &str,
    bound: Duration,
) -> Result<Vec<Value>, Failure> {
    let deadline = Instant::now() + bound;
    let (method, _) =
        list_method(what).ok_or_else(|| Failure::msg(format!("cannot list {what}")))?;
    let id = next_id(s);
    let f = modern::req(s, id, method, Map::new());
    s.send_frame(&f).await?;
    let mut seen = Seen::default();
    let items = pages(s, what, id, deadline, &mut seen).await?;
    store(s, what, items.clone());
    Ok(items)
}

/// Reads the first page (already requested as `id`) and asks for the next ones while the result
/// has `nextCursor`, like `sendRequestPaginated`, also when it is null.
pub(super) async fn pages(
    s: &mut Session,
    what: &str,
    mut id: i64,
    deadline: Instant,
    seen: &mut Seen,
) -> Result<Vec<Value>, Failure> {
    let (method, member) =
        list_method(what).ok_or_else(|| Failure::msg(format!("cannot list {what}")))?;
    let mut items = Vec::new();
    let mut none = Vec::new();
    for page in 1..=PAGE_CAP {
        let r = await_response(s, id, deadline, &mut none, seen).await?;
        let Some(result) = r.get("result") else {
            return Err(Failure::mismatch(
                format!("{method} failed"),
                &json!({"result":"<object>"}),
                &r,
            ));
        };
        items.extend(
            result
                .get(member)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        let Some(cursor) = result.get("nextCursor").cloned() else {
            return Ok(items);
        };
        if !cursor.is_string() && s.setup.mode == Mode::Assert {
            return Err(Failure::mismatch(
                format!("R4: VS Code would ask for the next page with cursor {cursor}"),
                &json!({"nextCursor":"<absent>"}),
                result,
            ));
        }
        if page == PAGE_CAP {
            break;
        }
        id = next_id(s);
        let mut p = Map::new();
        p.insert("cursor".into(), cursor);
        let f = modern::req(s, id, method, p);
        s.send_frame(&f).await?;
    }
    Err(Failure::msg(format!(
        "R4: {method} still had nextCursor after {PAGE_CAP} pages; VS Code would page for ever"
    )))
}

pub(super) fn check_list(
    what: &str,
    items: &[Value],
    opts: &Map<String, Value>,
) -> Result<(), Failure> {
    let names: Vec<String> = items
        .iter()
        .map(|i| {
            i.get("name")
                .or_else(|| i.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    let actual = json!(names);
    if let Some(want) = opts.get("expect_names").and_then(Value::as_array) {
        let mut w: Vec<String> = want
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let mut a = names.clone();
        w.sort();
        a.sort();
        if w != a {
            return Err(Failure::mismatch(
                format!("the {what} are not the expected ones"),
                &json!(w),
                &json!(a),
            ));
        }
    }
    if let Some(want) = opts.get("includes").and_then(Value::as_array) {
        for n in want.iter().filter_map(Value::as_str) {
            if !names.iter().any(|x| x == n) {
                return Err(Failure::mismatch(
                    format!("the {what} lack {n}"),
                    &json!(n),
                    &actual,
                ));
            }
        }
    }
    if let Some(unwanted) = opts.get("excludes").and_then(Value::as_array) {
        for n in unwanted.iter().filter_map(Value::as_str) {
            if names.iter().any(|x| x == n) {
                let want = json!(format!("no {n}"));
                return Err(Failure::mismatch(
                    format!("the {what} still have {n}"),
                    &want,
                    &actual,
                ));
            }
        }
    }
    if let Some(count) = opts.get("count").and_then(Value::as_u64)
        && names.len() as u64 != count
    {
        return Err(Failure::mismatch(
            format!("expected {count} {what}, got {}", names.len()),
            &json!(count),
            &actual,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_relist_after_the_upstream_process_stopped() {
        assert!(!relists_after(
            &json!({"code":-32603,"message":"m","data":{"cause":"upstream_exited"}})
        ));
        assert!(relists_after(
            &json!({"code":-32603,"message":"m","data":{"cause":"timeout"}})
        ));
        assert!(relists_after(
            &json!({"code":-32602,"message":"Unknown tool"})
        ));
    }
}
