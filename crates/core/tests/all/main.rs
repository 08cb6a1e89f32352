//! toolbelt-core integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approval_boundary;
mod ceilings;
mod generated;
mod grants_table;
mod house;
mod settings_rules;
mod shell_policy;
mod shell_table;
