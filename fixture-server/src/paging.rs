//! Pages of the list results. A cursor is `page-<offset>`; a cursor that the fixture did not
//! give is refused with -32602 (pagination page of the specification). A last page has no
//! `nextCursor` at all (R4 is about the bridge, but the fixture never sends `null` either).
use rmcp::ErrorData as McpError;

/// The number of items in one page of `tools/list`, `prompts/list` and `resources/list`.
/// The default tools fit in one page; `--many-tools` makes more pages.
pub const PAGE_SIZE: usize = 50;

/// One page of `items` from `cursor`, and the cursor of the next page.
pub fn page<T>(items: Vec<T>, cursor: Option<&str>) -> Result<(Vec<T>, Option<String>), McpError> {
    let start = match cursor {
        None => 0,
        Some(text) => text
            .strip_prefix("page-")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n > 0 && *n < items.len())
            .ok_or_else(|| {
                McpError::invalid_params(format!("the cursor '{text}' is not valid"), None)
            })?,
    };
    let end = start.saturating_add(PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| format!("page-{end}"));
    let page = items.into_iter().skip(start).take(end - start).collect();
    Ok((page, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_the_pages() {
        let items: Vec<usize> = (0..120).collect();
        let (first, next) = page(items.clone(), None).unwrap_or_default();
        assert_eq!((first.len(), next.as_deref()), (50, Some("page-50")));
        let (second, next) = page(items.clone(), Some("page-50")).unwrap_or_default();
        assert_eq!((second[0], next.as_deref()), (50, Some("page-100")));
        let (last, next) = page(items.clone(), Some("page-100")).unwrap_or_default();
        assert_eq!((last.len(), next), (20, None));
        assert!(page(items.clone(), Some("page-120")).is_err());
        assert!(page(items.clone(), Some("page-0")).is_err());
        assert!(page(items, Some("x")).is_err());
        let (empty, next) = page(Vec::<usize>::new(), None).unwrap_or_default();
        assert!(empty.is_empty() && next.is_none());
    }
}
