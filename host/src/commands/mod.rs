//! What each command does; `main` only parses and dispatches.

pub mod policy;
