//! Helpers for the integration tests.
