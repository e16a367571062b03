//! h5prov analyzer library.
