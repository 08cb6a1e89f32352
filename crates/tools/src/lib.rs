//! toolbelt-tools: the built-in tools, one file per tool.
//!
//! - [`fs::read_file`], [`fs::list_directory`], [`fs::read_many_files`]
//! - [`search::grep_search`], [`search::glob`]
//! - [`edit::replace`], [`edit::write_file`]

pub mod collate;
pub mod edit;
pub mod fs;
pub mod search;

use std::sync::Arc;

use toolbelt_core::Tool;

/// Every built-in tool, in upstream's registration order.
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(fs::list_directory::ListDirectory),
        Arc::new(fs::read_file::ReadFile),
        Arc::new(search::grep_search::GrepSearch),
        Arc::new(search::glob::Glob),
        Arc::new(edit::replace::Replace),
        Arc::new(edit::write_file::WriteFile),
        Arc::new(fs::read_many_files::ReadManyFiles),
    ]
}
