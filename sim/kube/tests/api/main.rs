//! kubesim behaviour, checked through a real kube-rs client (and kubectl).

mod access;
mod common;
mod conformance;
mod crud;
mod discovery_faults;
mod kubectl;
mod lifecycle;
mod patches;
mod services;
mod tables;
mod watch;
