//! The link layer's listings: per group, how often a process listed its links
//! (`link.specific:iter`, `H5Literate2`/`H5Lvisit2`, h5py's `keys()`) with no change to
//! the group's links in between. A listing visits every link of the group; the same
//! listing again returns the same names. The `repeated_link_iteration` term of the cost
//! model (`crate::insights::costmodel`) judges these facts.
//!
//! Collected by the dataset rules' recorder ([`crate::aggregate::dataset_io::Recorder`]),
//! which sees every record of a trace file, one process at a time.

use crate::read::record::RecordRef;
use std::collections::BTreeMap;

/// One group's listings, over the processes that listed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupListings {
    /// Listings (`link.specific:iter` calls).
    pub listings: u64,
    /// Listings that repeat the process's previous listing of the group: no link of the
    /// group created, deleted, moved or copied since.
    pub repeats: u64,
    /// Time of the repeated listings, ns.
    pub repeat_ns: u64,
    /// Links the processes created in the group (a lower bound of its links: the trace
    /// does not see links made before the file was opened), most of any one process.
    pub links_created: u64,
}

impl GroupListings {
    fn merge(&mut self, o: &GroupListings) {
        self.listings += o.listings;
        self.repeats += o.repeats;
        self.repeat_ns += o.repeat_ns;
        self.links_created = self.links_created.max(o.links_created);
    }
}

/// Every group's listings, by (file, group path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkListings(pub BTreeMap<(String, String), GroupListings>);

impl LinkListings {
    /// Adds another part (commutative and associative).
    pub fn merge(&mut self, o: LinkListings) {
        for (k, v) in o.0 {
            self.0.entry(k).or_default().merge(&v);
        }
    }
}

/// One process's state of a group: its facts, and whether it listed the group since the
/// last change of its links.
#[derive(Debug, Default)]
struct Local {
    facts: GroupListings,
    listed: bool,
}

/// Collects the listings of one trace file (one process).
#[derive(Debug, Default)]
pub struct ListingRecorder {
    /// By file, then group path.
    groups: BTreeMap<String, BTreeMap<String, Local>>,
}

/// The group a link path is in: `/a/b` → `/a`, `b` → `/`, `/b` → `/`.
fn parent(path: &str) -> &str {
    match path.trim_end_matches('/').rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

impl ListingRecorder {
    /// Adds one record; only link records count.
    #[inline]
    pub fn add(&mut self, r: &RecordRef<'_>) {
        if !r.op.starts_with("link.") || r.status < 0 {
            return;
        }
        if r.op == "link.specific:iter" {
            let g = self.group(r.file, r.path);
            g.facts.listings += 1;
            if g.listed {
                g.facts.repeats += 1;
                g.facts.repeat_ns += r.total_ns;
            }
            g.listed = true;
        } else if r.op.starts_with("link.create")
            || r.op == "link.specific:delete"
            || r.op == "link.copy"
            || r.op == "link.move"
        {
            // A change of the group's links: the next listing is a new one. A link named
            // relative to its location (`H5Lcreate_hard(obj, ".", group, "name")` records
            // `name`) or a move (whose source group the record does not name) may be in
            // any group of the file: every group of the file counts as changed.
            if r.path.starts_with('/') && r.op != "link.move" {
                let g = self.group(r.file, parent(r.path));
                g.listed = false;
                g.facts.links_created += u64::from(r.op != "link.specific:delete");
            } else if let Some(groups) = self.groups.get_mut(r.file) {
                for g in groups.values_mut() {
                    g.listed = false;
                }
            }
        }
    }

    fn group(&mut self, file: &str, path: &str) -> &mut Local {
        // Most records find their file and group: no allocation then.
        if !self.groups.contains_key(file) {
            self.groups.insert(file.to_string(), BTreeMap::new());
        }
        let groups = self.groups.get_mut(file).expect("inserted above");
        if !groups.contains_key(path) {
            groups.insert(path.to_string(), Local::default());
        }
        groups.get_mut(path).expect("inserted above")
    }

    /// The facts of the groups listed more than once, for the next trace file's use of
    /// the recorder.
    pub fn finish(&mut self) -> LinkListings {
        LinkListings(
            std::mem::take(&mut self.groups)
                .into_iter()
                .flat_map(|(f, gs)| {
                    gs.into_iter()
                        .filter(|(_, l)| l.facts.repeats > 0)
                        .map(move |(g, l)| ((f.clone(), g), l.facts))
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec<'a>(op: &'a str, path: &'a str) -> RecordRef<'a> {
        RecordRef {
            op,
            kind: "group",
            file: "f.h5",
            path,
            total_ns: 100,
            ..Default::default()
        }
    }

    #[test]
    fn parents() {
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/b"), "/");
        assert_eq!(parent("b"), "/");
        assert_eq!(parent("/a/b/"), "/a");
    }

    #[test]
    fn a_listing_repeats_until_the_links_change() {
        let mut r = ListingRecorder::default();
        for i in 0..3 {
            r.add(&rec("link.create:hard", &format!("/runs/r{i}")));
        }
        // Listed three times: two repeats.
        for _ in 0..3 {
            r.add(&rec("link.specific:iter", "/runs"));
        }
        // A new link: the next listing is fresh, the one after repeats.
        r.add(&rec("link.create:hard", "/runs/r3"));
        r.add(&rec("link.specific:iter", "/runs"));
        r.add(&rec("link.specific:iter", "/runs"));
        // A link made elsewhere changes nothing here.
        r.add(&rec("link.create:hard", "/other/x"));
        r.add(&rec("link.specific:iter", "/runs"));
        // A link named relative to its location may be in this group: a fresh listing.
        r.add(&rec("link.create:hard", "run9"));
        r.add(&rec("link.specific:iter", "/runs"));
        // Another group, listed once: not kept.
        r.add(&rec("link.specific:iter", "/other"));
        let got = r.finish();
        assert_eq!(got.0.len(), 1, "{got:?}");
        let g = &got.0[&("f.h5".to_string(), "/runs".to_string())];
        assert_eq!(
            (g.listings, g.repeats, g.repeat_ns, g.links_created),
            (7, 4, 400, 4)
        );
        // The recorder is empty for the next trace file.
        assert!(r.finish().0.is_empty());
    }
}
