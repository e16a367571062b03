//! libh5prov
