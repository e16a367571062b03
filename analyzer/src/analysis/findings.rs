//! The report's findings ([`Insight`], with their [`Level`]) and the [`Thresholds`] they
//! are judged by, with every default as a named constant. The rules that make the
//! findings are in [`crate::insights`], which reads the [`Report`](super::Report) these
//! types are part of.

use crate::analysis::stats::MODIFIED_Z_THRESHOLD;
pub use crate::units::Quantity;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// Drishti's rank-imbalance rule: (slowest − fastest) / total above this flags the slowest.
pub const IMBALANCE: f64 = 0.15;
/// p99/p50 at or above this makes an operation tail-heavy.
pub const TAIL_RATIO: f64 = 10.0;
/// Calls an operation needs before its tail is judged.
pub const TAIL_MIN_CALLS: u64 = 100;
/// Data accesses below this size are "small" (1 MiB).
pub const SMALL_IO_BYTES: u64 = 1 << 20;
/// Fraction of small accesses that triggers the small-I/O insight (Drishti's
/// `small_requests`; it also needs [`crate::insights::dataset::SMALL_IO_MIN`] of them).
pub const SMALL_IO_FRACTION: f64 = 0.1;
/// Share of call time in metadata operations that triggers the metadata insight.
pub const METADATA_FRACTION: f64 = 0.5;
/// Opens of the same object per process that count as open/close churn.
pub const CHURN_OPENS: u64 = 100;
/// Share of a read-only file's time spent in `dataset.close` that counts as slow close.
pub const CLOSE_FRACTION: f64 = 0.2;
/// Datasets smaller than this are tiny (64 KiB, the compact-layout limit).
pub const TINY_DATASET_BYTES: u64 = 64 << 10;
/// Tiny datasets needed for the many-tiny-datasets insight.
pub const TINY_DATASET_COUNT: u64 = 1000;
/// Writes to one contiguous dataset (each below [`SMALL_IO_BYTES`] on average) that count as
/// many small partial writes.
pub const PARTIAL_WRITES: u64 = 10;
/// Share of all call time an operation needs before its stragglers are an insight.
pub const MIN_OP_SHARE: f64 = 0.01;
/// A straggler call must also be at least this many times the median duration: with tight
/// distributions the MAD is tiny and a 30 % slower call would otherwise score above 3.5.
pub const CALL_MIN_RATIO: f64 = 2.0;
/// A rank flagged by the Z-score must also have at least this many times the median total
/// (same reason: with a handful of ranks of nearly equal totals the MAD is tiny).
pub const RANK_MIN_RATIO: f64 = 1.2;
/// Share of all call time above which one operation is reported as dominant.
pub const HOT_OP_SHARE: f64 = 0.5;

/// Data accesses needed before access sizes are judged.
pub const MIN_DATA_ACCESSES: u64 = 10;

/// Share of the run's HDF5 time a read-only file's dataset closes need before
/// `readonly_slow_close` names the file (an INFO finding must be material too).
pub const CLOSE_MIN_SHARE: f64 = 0.05;
/// A finding that explains at least this share of the run's HDF5 time is HIGH.
pub const SHARE_HIGH: f64 = 0.30;
/// A finding that explains at least this share of the run's HDF5 time is WARN (below: INFO).
pub const SHARE_WARN: f64 = 0.10;

/// The severity of a finding from the share of the run's HDF5 time (all traced calls of
/// all processes) that it explains: HIGH from [`SHARE_HIGH`], WARN from [`SHARE_WARN`],
/// else INFO. A share, not a count or a ratio of durations, so that the same program
/// gets the same severity run after run; rules whose trigger is structural (a setting,
/// a layout) still weigh the time of the calls it affects.
pub fn severity_for_share(share: f64) -> Level {
    if share >= SHARE_HIGH {
        Level::High
    } else if share >= SHARE_WARN {
        Level::Warn
    } else {
        Level::Info
    }
}

/// The thresholds in force (defaults are the constants above; flags override them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    /// Modified Z-score threshold for straggler calls and ranks.
    pub z_threshold: f64,
    /// Drishti imbalance threshold (also used for rank imbalance in bytes/time).
    pub imbalance: f64,
    /// Minimum duration / median of a straggler call.
    pub call_min_ratio: f64,
    /// Minimum total / median total of a Z-score straggler rank.
    pub rank_min_ratio: f64,
    /// Tail-heavy p99/p50 ratio.
    pub tail_ratio: f64,
    /// Minimum calls for tail judgement.
    pub tail_min_calls: u64,
    /// Small access size, bytes.
    pub small_io_bytes: u64,
    /// Fraction of small accesses.
    pub small_io_fraction: f64,
    /// Metadata time share.
    pub metadata_fraction: f64,
    /// Opens per process of one object.
    pub churn_opens: u64,
    /// `dataset.close` share on read-only files.
    pub close_fraction: f64,
    /// Tiny dataset size, bytes.
    pub tiny_dataset_bytes: u64,
    /// Tiny dataset count.
    pub tiny_dataset_count: u64,
    /// Small writes to one contiguous dataset.
    pub partial_writes: u64,
    /// Minimum op share for straggler insights.
    pub min_op_share: f64,
    /// Share of a collective operation's time that must be waiting before its late rank
    /// is named.
    pub late_wait_share: f64,
    /// Waiting (ns) a collective operation needs before its late rank is named.
    pub late_min_wait_ns: u64,
    /// Stripe size of the file system, bytes (`--stripe-size`); 0 when not given.
    pub stripe_size: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            z_threshold: MODIFIED_Z_THRESHOLD,
            imbalance: IMBALANCE,
            call_min_ratio: CALL_MIN_RATIO,
            rank_min_ratio: RANK_MIN_RATIO,
            tail_ratio: TAIL_RATIO,
            tail_min_calls: TAIL_MIN_CALLS,
            small_io_bytes: SMALL_IO_BYTES,
            small_io_fraction: SMALL_IO_FRACTION,
            metadata_fraction: METADATA_FRACTION,
            churn_opens: CHURN_OPENS,
            close_fraction: CLOSE_FRACTION,
            tiny_dataset_bytes: TINY_DATASET_BYTES,
            tiny_dataset_count: TINY_DATASET_COUNT,
            partial_writes: PARTIAL_WRITES,
            min_op_share: MIN_OP_SHARE,
            late_wait_share: crate::analysis::collective::MIN_WAIT_SHARE,
            late_min_wait_ns: crate::analysis::collective::MIN_WAIT_NS,
            stripe_size: 0,
        }
    }
}

/// Severity of an insight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// Costs a lot of time now.
    High,
    /// Likely a problem.
    Warn,
    /// Worth knowing.
    Info,
    /// Checked and fine.
    Ok,
}

impl Level {
    /// Upper-case name.
    pub fn name(self) -> &'static str {
        match self {
            Level::High => "HIGH",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Ok => "OK",
        }
    }
}

/// The numbers and names a finding's text is made from, each under a name, in the order
/// the rule gave them: in `--json` an object `{"calls": {"count": 1024}, "time": {"ns":
/// 123456}, "file": {"name": "a.h5"}}` ([`Quantity`] gives the unit keys; `docs/INSIGHTS.md`
/// the schema). A rule fills it from the values it prints, so the two agree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence(pub Vec<(&'static str, Quantity)>);

impl Evidence {
    /// No evidence.
    pub fn new() -> Self {
        Evidence(Vec::new())
    }
    /// Adds `q` under `name`.
    pub fn with(mut self, name: &'static str, q: Quantity) -> Self {
        debug_assert!(self.get(name).is_none(), "evidence {name} given twice");
        self.0.push((name, q));
        self
    }
    /// Adds a duration (ns).
    pub fn ns(self, name: &'static str, v: u64) -> Self {
        self.with(name, Quantity::Ns(v))
    }
    /// Adds a byte count.
    pub fn bytes(self, name: &'static str, v: u64) -> Self {
        self.with(name, Quantity::Bytes(v))
    }
    /// Adds a count.
    pub fn count(self, name: &'static str, v: u64) -> Self {
        self.with(name, Quantity::Count(v))
    }
    /// Adds a part of a whole (0 to 1).
    pub fn fraction(self, name: &'static str, v: f64) -> Self {
        self.with(name, Quantity::Fraction(v))
    }
    /// Adds a ratio of two quantities.
    pub fn ratio(self, name: &'static str, v: f64) -> Self {
        self.with(name, Quantity::Ratio(v))
    }
    /// Adds a bandwidth (bytes per second).
    pub fn bytes_per_s(self, name: &'static str, v: f64) -> Self {
        self.with(name, Quantity::BytesPerS(v))
    }
    /// Adds a name (file, object path, operation, process).
    pub fn name(self, name: &'static str, v: impl Into<String>) -> Self {
        self.with(name, Quantity::Name(v.into()))
    }
    /// The quantity given under `name`.
    pub fn get(&self, name: &str) -> Option<&Quantity> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, q)| q)
    }
    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Evidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, q) in &self.0 {
            m.serialize_entry(name, q)?;
        }
        m.end()
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Insight {
    /// Severity.
    pub level: Level,
    /// Stable identifier (`small_io`, `metadata_time`, ...).
    pub code: String,
    /// One-line statement.
    pub title: String,
    /// Evidence.
    pub detail: String,
    /// What to do.
    pub recommendation: String,
    /// The finding's own numbers and names, typed ([`Evidence`]): those of `title` and
    /// `detail`, and the share of the run's HDF5 time its severity comes from.
    pub evidence: Evidence,
    /// Per object a finding lists in `detail` (the costliest five at most, in its order),
    /// that object's evidence; empty for a finding about the run as a whole.
    pub items: Vec<Evidence>,
}

impl Insight {
    /// The finding with `evidence`.
    pub fn with(mut self, evidence: Evidence) -> Self {
        self.evidence = evidence;
        self
    }
    /// The finding with `items`.
    pub fn with_items(mut self, items: Vec<Evidence>) -> Self {
        self.items = items;
        self
    }
}
