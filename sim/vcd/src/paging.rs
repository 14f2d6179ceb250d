//! CloudAPI list semantics: FIQL filter, sorting, `page`/`pageSize` pages
//! (a page past the end is empty, not an error) with `Link` headers, and
//! the cursor pages of NAT rules.

use std::cmp::Ordering;
use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::fiql::{Filter, lookup};

#[derive(Debug, Clone, Copy)]
pub struct PageLimits {
    pub default_size: u32,
    pub max_size: u32,
}

/// Most CloudAPI lists.
pub const STANDARD: PageLimits = PageLimits {
    default_size: 25,
    max_size: 128,
};
/// `orgVdcNetworks`.
pub const NETWORKS: PageLimits = PageLimits {
    default_size: 16,
    max_size: 32,
};

#[derive(Debug, Clone)]
pub struct Sort {
    pub field: String,
    pub descending: bool,
}

impl Sort {
    pub fn ascending(field: &str) -> Self {
        Self {
            field: field.to_string(),
            descending: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ListParams {
    pub page: u32,
    /// Already clamped to the endpoint's maximum.
    pub page_size: u32,
    pub filter: Option<Filter>,
    pub sort: Option<Sort>,
    pub cursor_offset: usize,
}

fn number(params: &HashMap<String, String>, name: &str) -> ApiResult<Option<u32>> {
    params
        .get(name)
        .map(|v| {
            v.parse::<u32>().map_err(|_| {
                ApiError::bad_request(format!("{name} must be a positive integer, got '{v}'"))
            })
        })
        .transpose()
}

impl ListParams {
    pub fn parse(params: &HashMap<String, String>, limits: PageLimits) -> ApiResult<Self> {
        let page = number(params, "page")?.unwrap_or(1);
        if page == 0 {
            return Err(ApiError::bad_request("page must be at least 1"));
        }
        let page_size = number(params, "pageSize")?
            .unwrap_or(limits.default_size)
            .clamp(1, limits.max_size);
        let filter = params
            .get("filter")
            .filter(|f| !f.is_empty())
            .map(|f| Filter::parse(f).map_err(|e| ApiError::bad_request(e.to_string())))
            .transpose()?;
        let sort = match (params.get("sortAsc"), params.get("sortDesc")) {
            (Some(field), _) if !field.is_empty() => Some(Sort::ascending(field)),
            (_, Some(field)) if !field.is_empty() => Some(Sort {
                field: field.clone(),
                descending: true,
            }),
            _ => None,
        };
        let cursor_offset = params
            .get("cursor")
            .map(|c| decode_cursor(c))
            .transpose()?
            .unwrap_or(0);
        Ok(Self {
            page,
            page_size,
            filter,
            sort,
            cursor_offset,
        })
    }

    /// Filters and sorts (by the request's sort, else `default_sort`).
    pub fn select(&self, items: Vec<Value>, default_sort: Option<Sort>) -> Vec<Value> {
        let mut items: Vec<Value> = match &self.filter {
            Some(filter) => items.into_iter().filter(|i| filter.matches(i)).collect(),
            None => items,
        };
        if let Some(sort) = self.sort.clone().or(default_sort) {
            items.sort_by(|a, b| {
                let ordering = compare_values(lookup(a, &sort.field), lookup(b, &sort.field));
                if sort.descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            });
        }
        items
    }
}

fn compare_values(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        (Some(x), Some(y)) => x.to_string().cmp(&y.to_string()),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// One page of a page-based list and the `Link` values that go with it.
pub struct PageOut {
    pub body: Value,
    pub links: Vec<String>,
}

/// `url` is the absolute URL of the list without a query.
pub fn page(items: Vec<Value>, params: &ListParams, url: &str, model: &str) -> PageOut {
    let total = items.len() as u32;
    let size = params.page_size;
    let page_count = total.div_ceil(size);
    let start = ((params.page - 1) as usize).saturating_mul(size as usize);
    let values: Vec<Value> = items.into_iter().skip(start).take(size as usize).collect();
    let link = |page: u32, rel: &str| {
        format!(
            "<{url}?page={page}&pageSize={size}>;rel=\"{rel}\";type=\"application/json\";model=\"{model}\""
        )
    };
    let mut links = Vec::new();
    if page_count > 0 {
        links.push(link(1, "firstPage"));
        links.push(link(page_count, "lastPage"));
    }
    if params.page < page_count {
        links.push(link(params.page + 1, "nextPage"));
    }
    if params.page > 1 && params.page <= page_count {
        links.push(link(params.page - 1, "previousPage"));
    }
    PageOut {
        body: json!({
            "resultTotal": total,
            "pageCount": page_count,
            "page": params.page,
            "pageSize": size,
            "associations": null,
            "values": values,
        }),
        links,
    }
}

/// One cursor page (NAT rules): `{"values": [...]}` and, when more remain,
/// a single `Link` with `rel="nextPage"` exactly.
pub fn cursor_page(
    items: Vec<Value>,
    params: &ListParams,
    url: &str,
) -> (Vec<Value>, Option<String>) {
    let size = params.page_size as usize;
    let start = params.cursor_offset.min(items.len());
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| {
        let cursor = BASE64.encode(
            json!({"NETWORKING_CURSOR_OFFSET": end.to_string(), "pageSize": size, "NETWORKING_CURSOR": format!("{end:05}")})
                .to_string(),
        );
        let encoded = cursor.replace('+', "%2B").replace('/', "%2F").replace('=', "%3D");
        format!("<{url}?cursor={encoded}&pageSize={size}>;rel=\"nextPage\";type=\"application/json\"")
    });
    (items[start..end].to_vec(), next)
}

fn decode_cursor(cursor: &str) -> ApiResult<usize> {
    let invalid = || ApiError::bad_request(format!("Invalid cursor '{cursor}'"));
    let bytes = BASE64.decode(cursor.trim()).map_err(|_| invalid())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    value
        .get("NETWORKING_CURSOR_OFFSET")
        .and_then(Value::as_str)
        .and_then(|offset| offset.parse().ok())
        .ok_or_else(invalid)
}
