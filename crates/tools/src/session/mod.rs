//! Tools about the session itself: the model's todo list, its memory, questions to the user,
//! and plan mode.

pub mod ask_user;
pub mod save_memory;
pub mod write_todos;
