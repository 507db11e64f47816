//! O10 for an upstream server at a URL: VS Code gets only the icons with a `data:` URI (pure).
//! VS Code drops the `http:` and `https:` icons of a stdio server and gives `file:` icons the
//! trust of a local process, which an icon of a remote server must not get.

use serde_json::Value;

/// The members of list results whose items can carry icons.
const LISTS: [&str; 4] = ["tools", "prompts", "resources", "resourceTemplates"];

/// Removes every icon without a `data:` URI from the server information of an `initialize`
/// result and from the items of a list result; an `icons` array that ends empty goes.
pub fn keep_data_icons(method: &str, result: &mut Value) {
    if method == "initialize" {
        if let Some(info) = result.get_mut("serverInfo") {
            filter(info);
        }
        return;
    }
    for list in LISTS {
        if let Some(items) = result.get_mut(list).and_then(Value::as_array_mut) {
            items.iter_mut().for_each(filter);
        }
    }
}

fn filter(holder: &mut Value) {
    let Some(map) = holder.as_object_mut() else {
        return;
    };
    let Some(icons) = map.get_mut("icons").and_then(Value::as_array_mut) else {
        return;
    };
    icons.retain(|icon| {
        icon.get("src").and_then(Value::as_str).is_some_and(|src| {
            src.get(..5)
                .is_some_and(|s| s.eq_ignore_ascii_case("data:"))
        })
    });
    if icons.is_empty() {
        map.remove("icons");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn o10_only_data_icons_stay_for_a_url_upstream() {
        let mut init = json!({"serverInfo":{"name":"n","icons":[
            {"src":"https://x/i.png"},{"src":"DATA:image/png;base64,AA=="},{"src":"file:///i.png"}]}});
        keep_data_icons("initialize", &mut init);
        assert_eq!(
            init["serverInfo"]["icons"],
            json!([{"src":"DATA:image/png;base64,AA=="}])
        );
        let mut list = json!({"tools":[
            {"name":"a","icons":[{"src":"http://x/a.png"}]},
            {"name":"b","icons":[{"src":"data:x"},{"src":7}]},
            {"name":"c"}],"nextCursor":"n"});
        keep_data_icons("tools/list", &mut list);
        assert_eq!(
            list,
            json!({"tools":[{"name":"a"},{"name":"b","icons":[{"src":"data:x"}]},{"name":"c"}],"nextCursor":"n"})
        );
        let mut templates =
            json!({"resourceTemplates":[{"uriTemplate":"t","icons":[{"src":"https://i"}]}]});
        keep_data_icons("resources/templates/list", &mut templates);
        assert_eq!(
            templates,
            json!({"resourceTemplates":[{"uriTemplate":"t"}]})
        );
    }
}
