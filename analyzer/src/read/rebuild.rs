//! The objects rows of a process that ended without closing HDF5, rebuilt from its trace.
//!
//! The connector writes an object's summary row (its objects file) when the object's last
//! reference goes, and buffers the rows until a flush or the end. A process that ends
//! with `_exit`, `os._exit` or `kill -9` leaves no row for the objects it still held and
//! loses the rows still buffered; its records, though, are all on disk (the trace and its
//! pending sidecar, [`super::input::pending_of`]). For such a process the analyzer rebuilds
//! one row per object from its records instead of reading its objects file, which would
//! hold only some of them (reading both would count those twice). This costs nothing on
//! the connector's per-call path.
//!
//! A rebuilt row has the columns the records carry: kind, file, path, opens, accesses,
//! reads, writes, bytes and times, transfer modes, `created`, the file's dataset and group
//! counters, the element size of its data transfers. The columns only the connector's
//! object tree knows (token, dims, layout, chunk, datatype, filters, fill and allocation
//! times, chunk cache, alignment, file system, MPI-IO) are left empty. A file's `open_ns`
//! runs from its first call to the end of the process's last call, since it was never
//! closed. One row is made per
//! (kind, file, path), where the connector makes one per state node (an object reopened
//! after all its handles were closed gets two rows): sums are the same, `rows` smaller.

use crate::read::record::{is_anonymous_label, RecordRef};
use h5prov_format::ObjectSummary;
use rustc_hash::FxHashMap;

/// Builds objects rows from one process's records ([`Rebuild::add`]), one per object.
#[derive(Debug, Default)]
pub struct Rebuild {
    /// Rows by (kind, file, path), in order of first appearance.
    index: FxHashMap<(String, String, String), usize>,
    rows: Vec<ObjectSummary>,
    /// Rows of anonymous objects by label (`(anonymous #N of pid P)`), until a link names
    /// them.
    anonymous: FxHashMap<String, usize>,
    /// The end of the last call: where the files the process never closed stop being open.
    end_ns: u64,
}

/// The kinds that have objects rows.
const KINDS: &[&str] = &["file", "group", "dataset", "attr", "datatype"];

impl Rebuild {
    /// Counts one record, as the connector counts the call on its object.
    pub fn add(&mut self, r: &RecordRef<'_>) {
        if !r.anon.is_empty() && r.op.starts_with("link.create") && r.status >= 0 {
            self.name_anonymous(r.anon, r.path);
        }
        if !KINDS.contains(&r.kind) {
            return;
        }
        let i = self.row(r.kind, r.file, r.path, r);
        let o = &mut self.rows[i];
        o.accesses += 1;
        o.first_ns = if o.first_ns == 0 {
            r.start_ns
        } else {
            o.first_ns.min(r.start_ns)
        };
        o.last_ns = o.last_ns.max(r.start_ns + r.total_ns);
        self.end_ns = self.end_ns.max(o.last_ns);
        if r.status < 0 {
            return;
        }
        let verb = r.op.strip_prefix(r.kind).and_then(|v| v.strip_prefix('.'));
        let created = match verb {
            Some("create" | "commit") => true,
            Some("open") => false,
            Some("read" | "write") if r.kind == "dataset" || r.kind == "attr" => {
                let share = r.total_ns / u64::from(r.batch.max(1));
                if verb == Some("write") {
                    o.writes += 1;
                    o.bytes_written += r.bytes;
                    o.file_bytes_written += r.file_bytes;
                    o.write_ns += share;
                } else {
                    o.reads += 1;
                    o.bytes_read += r.bytes;
                    o.file_bytes_read += r.file_bytes;
                    o.read_ns += share;
                }
                o.type_size = o.type_size.max(r.type_size);
                match (r.xfer, r.xfer_actual) {
                    ("collective", "collective" | "") => o.coll_io += 1,
                    ("collective", _) => o.broken_coll_io += 1,
                    ("independent", _) => o.ind_io += 1,
                    _ => {}
                }
                return;
            }
            _ => return,
        };
        o.opens += 1;
        o.created |= u8::from(created);
        let kind = r.kind;
        if kind == "dataset" || kind == "group" {
            let f = self.row("file", r.file, "/", r);
            let f = &mut self.rows[f];
            match (kind, created) {
                ("dataset", true) => f.dsets_created += 1,
                ("dataset", false) => f.dsets_opened += 1,
                ("group", true) => f.groups_created += 1,
                _ => f.groups_opened += 1,
            }
        }
    }

    /// The row of (kind, file, path), made when new.
    fn row(&mut self, kind: &str, file: &str, path: &str, r: &RecordRef<'_>) -> usize {
        let key = (kind.to_string(), file.to_string(), path.to_string());
        if let Some(i) = self.index.get(&key) {
            return *i;
        }
        let i = self.rows.len();
        self.rows.push(ObjectSummary {
            rank: r.rank,
            pid: r.pid,
            kind: kind.into(),
            file: file.into(),
            path: path.into(),
            ..ObjectSummary::default()
        });
        if is_anonymous_label(path) {
            self.anonymous.insert(path.to_string(), i);
        }
        self.index.insert(key, i);
        i
    }

    /// A link named the anonymous object labelled `label` `path`: its row takes the name
    /// (and is added into the row of that name, if one was made already).
    fn name_anonymous(&mut self, label: &str, path: &str) {
        let Some(i) = self.anonymous.remove(label) else {
            return;
        };
        let o = &self.rows[i];
        self.index
            .remove(&(o.kind.to_string(), o.file.to_string(), o.path.to_string()));
        let key = (o.kind.to_string(), o.file.to_string(), path.to_string());
        match self.index.get(&key) {
            // Another row has the name: the two become one (the label's row is left
            // empty, and skipped by `rows`).
            Some(&j) => {
                let from = std::mem::take(&mut self.rows[i]);
                let to = &mut self.rows[j];
                to.opens += from.opens;
                to.accesses += from.accesses;
                to.reads += from.reads;
                to.writes += from.writes;
                to.bytes_read += from.bytes_read;
                to.bytes_written += from.bytes_written;
                to.file_bytes_read += from.file_bytes_read;
                to.file_bytes_written += from.file_bytes_written;
                to.read_ns += from.read_ns;
                to.write_ns += from.write_ns;
                to.ind_io += from.ind_io;
                to.coll_io += from.coll_io;
                to.broken_coll_io += from.broken_coll_io;
                to.created |= from.created;
                to.type_size = to.type_size.max(from.type_size);
                to.first_ns = match (to.first_ns, from.first_ns) {
                    (0, b) => b,
                    (a, 0) => a,
                    (a, b) => a.min(b),
                };
                to.last_ns = to.last_ns.max(from.last_ns);
            }
            None => {
                self.rows[i].path = path.into();
                self.index.insert(key, i);
            }
        }
    }

    /// The rebuilt rows, in order of each object's first record. A file's `open_ns` runs
    /// from its first call to the end of the process's last call (it was not closed).
    pub fn into_rows(self) -> impl Iterator<Item = ObjectSummary> {
        let end = self.end_ns;
        self.rows
            .into_iter()
            .filter(|o| !o.kind.is_empty())
            .map(move |mut o| {
                if o.kind == "file" {
                    o.open_ns = end.saturating_sub(o.first_ns);
                }
                o
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec<'a>(op: &'a str, kind: &'a str, path: &'a str, start: u64) -> RecordRef<'a> {
        RecordRef {
            op,
            kind,
            file: "f.h5",
            path,
            start_ns: start,
            total_ns: 10,
            pid: 7,
            batch: 1,
            ..RecordRef::default()
        }
    }

    #[test]
    fn rows_count_opens_io_and_the_files_counters() {
        let mut b = Rebuild::default();
        b.add(&rec("file.create", "file", "/", 100));
        b.add(&rec("dataset.create", "dataset", "/d", 200));
        b.add(&RecordRef {
            bytes: 64,
            ..rec("dataset.write", "dataset", "/d", 300)
        });
        b.add(&rec("dataset.open", "dataset", "/d", 400));
        b.add(&rec("dataset.open", "dataset", "/e", 450));
        b.add(&RecordRef {
            status: -1,
            ..rec("dataset.write", "dataset", "/e", 460)
        });
        b.add(&rec("link.create", "", "/x", 470));
        let rows: Vec<_> = b.into_rows().collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        let (f, d, e) = (&rows[0], &rows[1], &rows[2]);
        assert_eq!((f.kind.as_str(), f.path.as_str()), ("file", "/"));
        assert_eq!((f.opens, f.created, f.accesses), (1, 1, 1));
        assert_eq!((f.dsets_created, f.dsets_opened), (1, 2));
        // From the file's first call to the end of the last call on an object (460 + 10).
        assert_eq!(f.open_ns, 370);
        assert_eq!((d.opens, d.created, d.accesses), (2, 1, 3));
        assert_eq!((d.writes, d.bytes_written, d.write_ns), (1, 64, 10));
        assert_eq!((d.first_ns, d.last_ns), (200, 410));
        assert_eq!((e.opens, e.created, e.accesses, e.writes), (1, 0, 2, 0));
    }

    #[test]
    fn an_anonymous_object_takes_the_name_its_link_gives() {
        let label = "(anonymous #1 of pid 7)";
        let mut b = Rebuild::default();
        b.add(&rec("dataset.create", "dataset", label, 100));
        b.add(&rec("dataset.write", "dataset", label, 200));
        b.add(&RecordRef {
            anon: label,
            ..rec("link.create:hard", "dataset", "/a", 300)
        });
        b.add(&rec("dataset.read", "dataset", "/a", 400));
        let ds: Vec<_> = b.into_rows().filter(|o| o.kind == "dataset").collect();
        assert_eq!(ds.len(), 1, "{ds:?}");
        assert_eq!(ds[0].path, "/a");
        assert_eq!((ds[0].opens, ds[0].writes, ds[0].reads), (1, 1, 1));
        assert_eq!(ds[0].accesses, 4);
    }
}
