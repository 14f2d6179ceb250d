//! Walking CloudAPI lists: page-based lists follow `page`/`pageCount`
//! (keeping our filter on every page), cursor lists (NAT rules) follow the
//! `Link: <…>;rel="nextPage"` header.

use reqwest::header::{HeaderMap, LINK};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::client::{ApiRequest, VcdClient};
use super::errors::VcdError;
use super::fiql::Filter;

/// Stops a list that never ends (a server bug) from looping forever.
const MAX_PAGES: u32 = 10_000;

/// The largest page VCD serves for most lists.
pub const MAX_PAGE_SIZE: u32 = 128;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page<T> {
    #[serde(default)]
    page_count: u32,
    #[serde(default = "Vec::new")]
    values: Vec<T>,
}

/// The links of one `Link` value: commas separate links only where the
/// next link's `<` follows (a URL may contain commas).
fn split_links(value: &str) -> Vec<String> {
    let mut links: Vec<String> = Vec::new();
    for piece in value.split(',') {
        match links.last_mut() {
            Some(current) if !piece.trim_start().starts_with('<') => {
                current.push(',');
                current.push_str(piece);
            }
            _ => links.push(piece.trim().to_string()),
        }
    }
    links
}

/// The target of the `rel="nextPage"` link, if any. A value may carry
/// several links and a link several rels.
pub fn next_page_link(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(LINK)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(split_links)
        .find_map(|link| {
            let (target, params) = link.trim_start_matches('<').split_once('>')?;
            let is_next = params.split(';').any(|param| {
                param.trim().strip_prefix("rel=").is_some_and(|rels| {
                    rels.trim_matches('"')
                        .split_whitespace()
                        .any(|r| r == "nextPage")
                })
            });
            is_next.then(|| target.to_string())
        })
}

fn path_of(link: &str) -> String {
    match reqwest::Url::parse(link) {
        Ok(url) => match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        },
        Err(_) => link.to_string(),
    }
}

/// Every item of a page-based list.
pub(in crate::vcd) async fn list_all<T: DeserializeOwned>(
    client: &VcdClient,
    operation: &'static str,
    path: &str,
    filter: Option<&Filter>,
    page_size: u32,
) -> Result<Vec<T>, VcdError> {
    let mut items = Vec::new();
    for page in 1..=MAX_PAGES {
        let mut request = ApiRequest::get(operation, path)
            .collection()
            .query("page", page)
            .query("pageSize", page_size);
        if let Some(filter) = filter {
            request = request.query("filter", filter);
        }
        let reply: Page<T> = client.fetch(request).await?;
        let empty = reply.values.is_empty();
        items.extend(reply.values);
        if empty || page >= reply.page_count {
            return Ok(items);
        }
    }
    Err(VcdError::Unexpected {
        call: client.call_of(operation, path),
        detail: format!("the list did not end after {MAX_PAGES} pages"),
    })
}

/// Every item of a cursor list.
pub(in crate::vcd) async fn list_by_cursor<T: DeserializeOwned>(
    client: &VcdClient,
    operation: &'static str,
    path: &str,
    page_size: u32,
) -> Result<Vec<T>, VcdError> {
    let mut items = Vec::new();
    let mut request = ApiRequest::get(operation, path)
        .collection()
        .query("pageSize", page_size);
    for _ in 0..MAX_PAGES {
        let reply = client.execute(&request).await?;
        let page: Page<T> = client.decode(&request, &reply)?;
        items.extend(page.values);
        match next_page_link(&reply.headers) {
            Some(link) => request = ApiRequest::get(operation, path_of(&link)).collection(),
            None => return Ok(items),
        }
    }
    Err(VcdError::Unexpected {
        call: client.call_of(operation, path),
        detail: format!("the cursor list did not end after {MAX_PAGES} pages"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn finds_next_page_among_several_links_and_rels() {
        let mut headers = HeaderMap::new();
        headers.append(
            LINK,
            HeaderValue::from_static(
                "<https://h/x?page=1>;rel=\"firstPage\";type=\"application/json\", <https://h/x?page=3&filter=a%2Cb>;rel=\"lastPage nextPage\"",
            ),
        );
        assert_eq!(
            next_page_link(&headers).as_deref(),
            Some("https://h/x?page=3&filter=a%2Cb")
        );
        let mut none = HeaderMap::new();
        none.append(
            LINK,
            HeaderValue::from_static("<https://h/x>;rel=\"previousPage\""),
        );
        assert_eq!(next_page_link(&none), None);
        assert_eq!(path_of("https://h:8443/x?cursor=ab%3D"), "/x?cursor=ab%3D");
    }
}
