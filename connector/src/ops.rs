//! Operation names: the [`Op`] enum comes from the declarative callback table
//! (`ffi/table.rs`), so the names the tracer records cannot drift from the callbacks.

pub use crate::ffi::table::Op;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for op in Op::ALL {
            let n = op.name();
            assert!(seen.insert(n), "duplicate op name {n}");
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_'),
                "{n}"
            );
        }
        assert_eq!(Op::DatasetWrite.name(), "dataset.write");
        assert_eq!(Op::FileSpecific.name(), "file.specific");
    }
}
