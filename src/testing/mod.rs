//! Testing helpers
