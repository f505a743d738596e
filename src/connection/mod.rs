//! Connection
