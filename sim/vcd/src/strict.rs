//! Request bodies read as VCD's deserializer reads them: a property the
//! definition does not declare is refused with the property and the
//! definition named (`Unrecognized field "monitorPort" (class
//! EdgeLoadBalancerHealthMonitor)`), in nested objects too. Read-only
//! properties the spec declares are accepted and dropped ([`ReadOnly`]),
//! because clients PUT back what they GET.
//!
//! A body type derives serde with `#[serde(remote = "Self")]`, which turns
//! the derived code into inherent functions, and [`definition!`] implements
//! the serde traits over them. The `Deserialize` impl renames serde's
//! "unknown field" error with the type's class: the innermost object's
//! impl sees the error first, so the class in the message is the one that
//! lacks the property, with no table of JSON paths to keep in step.

use serde::de::{Error, IgnoredAny};

/// A read-only property of a definition: accepted in a write and dropped.
/// Objects name their definition (`ReadOnly<Vec<Ref>>`) so their own
/// properties are still checked, as VCD's deserializer checks them.
pub type ReadOnly<T = IgnoredAny> = Option<T>;

/// serde's `unknown field` error as VCD words it; other errors unchanged.
pub fn unrecognized<E: Error>(error: E, class: &str) -> E {
    let text = error.to_string();
    match text
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
    {
        Some((field, _)) => E::custom(format_args!(
            "Unrecognized field \"{field}\" (class {class}), not marked as ignorable"
        )),
        None => error,
    }
}

/// A property of `class` that the negotiated API version does not define,
/// refused as VCD's deserializer for that version refuses it.
pub fn not_in_version(field: &str, class: &str) -> crate::error::ApiError {
    crate::error::ApiError::bad_request(format!(
        "Unrecognized field \"{field}\" (class {class}), not in API version {}",
        crate::context::current().api_version
    ))
}

/// Implements `Deserialize` (and with `serialize`, `Serialize`) for a body
/// type deriving serde with `remote = "Self"`, under the spec's class name;
/// `Alias = Type` declares a newtype of `Type` under another class.
macro_rules! definition {
    ($ty:ident, $class:literal) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $ty::deserialize(deserializer)
                    .map_err(|error| $crate::strict::unrecognized(error, $class))
            }
        }
    };
    ($ty:ident, $class:literal, serialize) => {
        $crate::strict::definition!($ty, $class);
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $ty::serialize(self, serializer)
            }
        }
    };
    ($alias:ident = $ty:ident, $class:literal) => {
        /// The fields of the inner definition under a class of its own (an
        /// `allOf` of it in the spec), which refusals name.
        #[derive(Debug, Clone)]
        pub struct $alias(pub $ty);
        impl<'de> serde::Deserialize<'de> for $alias {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $ty::deserialize(deserializer)
                    .map($alias)
                    .map_err(|error| $crate::strict::unrecognized(error, $class))
            }
        }
        impl serde::Serialize for $alias {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $ty::serialize(&self.0, serializer)
            }
        }
    };
}

pub(crate) use definition;

/// The message of a body that does not parse, without serde_json's
/// position (VCD names the property, not a column).
pub fn body_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    text.strip_suffix(&position).unwrap_or(&text).to_string()
}
