//! VCD's `{name, id}` reference, the one model the transport core shares
//! with the typed resources (a task's owner, the cached org and VDC).

use serde::{Deserialize, Serialize};

/// VCD's `{name, id}` reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityRef {
    /// The object's name; some references carry only the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The object's id, usually a URN such as `urn:vcloud:gateway:<uuid>`.
    pub id: String,
}

impl EntityRef {
    /// A reference with both name and id.
    pub fn new(name: impl Into<String>, id: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            id: id.into(),
        }
    }
}
