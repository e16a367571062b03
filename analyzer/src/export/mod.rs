//! Exports of the traces for other tools, beside the report: Chrome/Perfetto trace-event
//! JSON ([`perfetto`]), a Parquet dataset of the records and objects ([`parquet`]) and W3C
//! PROV provenance graphs built from it ([`prov`]).

pub mod parquet;
pub mod perfetto;
pub mod prov;
