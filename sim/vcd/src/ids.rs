//! Identifiers as clients see them: `urn:vcloud:<type>:<uuid>`.

pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub fn urn(kind: &str, uuid: &str) -> String {
    format!("urn:vcloud:{kind}:{uuid}")
}

pub fn new_urn(kind: &str) -> String {
    urn(kind, &new_uuid())
}

/// The UUID at the end of a URN (or the input itself when it is bare).
pub fn uuid_of(id: &str) -> &str {
    id.rsplit(':').next().unwrap_or(id)
}

/// True when `candidate` names `urn` either as the URN or as its bare UUID.
pub fn same_id(urn: &str, candidate: &str) -> bool {
    urn == candidate || uuid_of(urn) == candidate
}
