//! What lifting a policy's answer charges against the store's hostcall fuel
//! (`OUTPUT_BYTES`), counted again on the lifted value, as policy suites
//! report it: wasmtime keeps the remaining fuel inside the lift
//! (`Store::hostcall_fuel` only returns the amount each lift starts with).
//!
//! Wasmtime 48 charges every string its UTF-8 bytes and every list its
//! length × the size of the host type it is lifted into; records, variants,
//! options and scalars cost nothing of their own. A 0.1.0 or 0.2.0 decision
//! is lifted into types of the same sizes, without traffic.

use std::mem::size_of;

use super::model::{
    AddressChoice, Decision, DecisionError, HeaderAction, HeaderMatch, HttpMatch, HttpMethod,
    HttpRules, Persistence, PortDecision, PortTraffic, RateLimitAction, Redirect, RequestAction,
    RequestRule, ResponseRule, SecurityAction, SecurityRule, TextMatch, UrlRewrite,
};

/// A lifted value's charge.
pub trait LiftCharge {
    /// The fuel lifting this value took.
    fn lift_charge(&self) -> usize;
}

impl LiftCharge for String {
    fn lift_charge(&self) -> usize {
        self.len()
    }
}

impl<T: LiftCharge> LiftCharge for Vec<T> {
    fn lift_charge(&self) -> usize {
        self.len() * size_of::<T>() + self.iter().map(T::lift_charge).sum::<usize>()
    }
}

impl<T: LiftCharge> LiftCharge for Option<T> {
    fn lift_charge(&self) -> usize {
        self.as_ref().map_or(0, T::lift_charge)
    }
}

impl LiftCharge for HttpMethod {
    fn lift_charge(&self) -> usize {
        0
    }
}

/// Records: the sum of their fields'.
macro_rules! fields {
    ($($ty:ty { $($field:ident),* })*) => {$(
        impl LiftCharge for $ty {
            fn lift_charge(&self) -> usize {
                0 $(+ self.$field.lift_charge())*
            }
        }
    )*};
}
fields!(
    Decision { address, ports, warnings, traffic, service_engine_group }
    PortDecision { certificate }
    PortTraffic { persistence, http }
    HttpRules { request, response, security }
    RequestRule { name, when, action }
    ResponseRule { name, when, headers }
    SecurityRule { name, when, action }
    HttpMatch { client_addresses, methods, path, headers }
    TextMatch { values }
    HeaderMatch { name, value }
    Redirect { host, path }
    UrlRewrite { host, path }
);

impl LiftCharge for AddressChoice {
    fn lift_charge(&self) -> usize {
        match self {
            Self::FromPool(pool) => pool.lift_charge(),
            Self::Specific(_) | Self::KeepCurrent => 0,
        }
    }
}

impl LiftCharge for Persistence {
    fn lift_charge(&self) -> usize {
        match self {
            Self::HttpCookie(name) | Self::AppCookie(name) => name.lift_charge(),
            Self::None | Self::ClientIp | Self::Tls => 0,
        }
    }
}

impl LiftCharge for HeaderAction {
    fn lift_charge(&self) -> usize {
        match self {
            Self::Add(header) | Self::Replace(header) => {
                header.name.lift_charge() + header.value.lift_charge()
            }
            Self::Remove(name) => name.lift_charge(),
        }
    }
}

impl LiftCharge for RequestAction {
    fn lift_charge(&self) -> usize {
        match self {
            Self::Modify(modification) => {
                modification.headers.lift_charge() + modification.rewrite.lift_charge()
            }
            Self::Redirect(redirect) => redirect.lift_charge(),
        }
    }
}

impl LiftCharge for SecurityAction {
    fn lift_charge(&self) -> usize {
        match self {
            Self::RateLimit(limit) => match &limit.then {
                RateLimitAction::Redirect(redirect) => redirect.lift_charge(),
                RateLimitAction::Close | RateLimitAction::Respond(_) => 0,
            },
            Self::Allow | Self::Close | Self::RedirectToHttps(_) | Self::Respond(_) => 0,
        }
    }
}

impl LiftCharge for DecisionError {
    fn lift_charge(&self) -> usize {
        match self {
            Self::InvalidAnnotation(field) => field.key.lift_charge() + field.message.lift_charge(),
            Self::UnsupportedPort(port) => port.message.lift_charge(),
            Self::CertificateNotFound(text) | Self::Other(text) => text.lift_charge(),
            Self::RequestedAddressUnavailable(_)
            | Self::UnsupportedIpFamily(_)
            | Self::NoAddressAvailable
            | Self::ProfileUnavailable(_) => 0,
        }
    }
}

impl<T: LiftCharge, E: LiftCharge> LiftCharge for Result<T, E> {
    fn lift_charge(&self) -> usize {
        match self {
            Ok(value) => value.lift_charge(),
            Err(error) => error.lift_charge(),
        }
    }
}
