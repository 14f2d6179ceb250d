//! What each command does; `main` only parses and dispatches.

pub mod demo;
pub mod policy;
pub mod run;
