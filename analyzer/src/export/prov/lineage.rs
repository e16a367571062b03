//! `h5prov lineage TARGET`: the chains of the provenance [`Graph`] through a file or a
//! dataset. Upstream: which process generated each version, from what (the datasets it is
//! inferred to derive from, else what the process used), recursively. Downstream: which
//! processes used it, and what they generated from it, recursively.

use super::{base_name, Class, Graph, Node, Rel};
use crate::read::Error;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// What `h5prov lineage` looks for: a file, or a dataset (`file.h5:/path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file as given.
    pub file: String,
    /// The dataset's path in it, if any.
    pub path: Option<String>,
}

impl Target {
    /// Parses `file.h5` or `file.h5:/path/in/file`.
    pub fn parse(s: &str) -> Result<Target, Error> {
        let (file, path) = match s.find(":/") {
            Some(i) => (&s[..i], Some(s[i + 1..].to_string())),
            None => (s, None),
        };
        if file.is_empty() {
            return Err(Error::Other(format!(
                "lineage target {s:?}: no file name (expected FILE or FILE:/PATH)"
            )));
        }
        Ok(Target {
            file: file.to_string(),
            path,
        })
    }

    /// Whether the path a process used, `used`, names this target's file: the same, or
    /// one of them a tail of the other (`sim.h5` and `/run/sim.h5`).
    fn names(&self, used: &str) -> bool {
        let tail = |long: &str, short: &str| {
            long.strip_suffix(short)
                .is_some_and(|head| head.ends_with('/'))
        };
        used == self.file || tail(used, &self.file) || tail(&self.file, used)
    }
}

/// A process, as the chains show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Process {
    /// Its id in the graph.
    pub id: String,
    /// The executable's name.
    pub program: String,
    /// Process id.
    pub pid: String,
    /// MPI rank (-1 unknown).
    pub rank: String,
    /// The launcher's job id, empty when none.
    pub job: String,
    /// User name.
    pub user: String,
    /// Host name.
    pub host: String,
    /// Start, UTC.
    pub start: String,
}

/// One entity of an upstream chain and who generated it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Upstream {
    /// Its id in the graph.
    pub entity: String,
    /// `file` or `file:/path`, with the version.
    pub label: String,
    /// The processes that generated it.
    pub generated_by: Vec<Generation>,
}

/// A process that generated an entity, and what it generated it from.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Generation {
    /// The process.
    pub process: Process,
    /// `true`: `from` are the datasets the entity is inferred to derive from; `false`:
    /// everything the process used.
    pub inferred: bool,
    /// Where it came from.
    pub from: Vec<Upstream>,
}

/// One entity of a downstream chain and who used it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Downstream {
    /// Its id in the graph.
    pub entity: String,
    /// `file` or `file:/path`, with the version.
    pub label: String,
    /// The processes that used it.
    pub used_by: Vec<Usage>,
}

/// A process that used an entity, and what it generated from it (inferred).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Usage {
    /// The process.
    pub process: Process,
    /// The entities it generated that derive from the one used.
    pub generated: Vec<Downstream>,
}

/// Both chains of one version of the target.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Lineage {
    /// The target's version, as an upstream chain.
    pub upstream: Upstream,
    /// The same version, as a downstream chain.
    pub downstream: Downstream,
}

/// The relations of the graph by argument, both ways.
struct Index<'g> {
    g: &'g Graph,
    fwd: HashMap<Rel, HashMap<&'g str, Vec<&'g str>>>,
    back: HashMap<Rel, HashMap<&'g str, Vec<&'g str>>>,
}

impl<'g> Index<'g> {
    fn new(g: &'g Graph) -> Self {
        let (mut fwd, mut back): (
            HashMap<_, HashMap<_, Vec<_>>>,
            HashMap<_, HashMap<_, Vec<_>>>,
        ) = (HashMap::new(), HashMap::new());
        for r in &g.relations {
            fwd.entry(r.rel)
                .or_default()
                .entry(r.from.as_str())
                .or_default()
                .push(r.to.as_str());
            back.entry(r.rel)
                .or_default()
                .entry(r.to.as_str())
                .or_default()
                .push(r.from.as_str());
        }
        Index { g, fwd, back }
    }
    fn fwd(&self, rel: Rel, from: &str) -> &[&'g str] {
        self.fwd
            .get(&rel)
            .and_then(|m| m.get(from))
            .map_or(&[], Vec::as_slice)
    }
    fn back(&self, rel: Rel, to: &str) -> &[&'g str] {
        self.back
            .get(&rel)
            .and_then(|m| m.get(to))
            .map_or(&[], Vec::as_slice)
    }
    fn node(&self, id: &str) -> Option<&'g Node> {
        self.g.nodes.get(id)
    }

    /// The file version of a version or dataset id.
    fn version_of(&self, id: &str) -> Option<&'g str> {
        let (key, n) = self.g.nodes.get_key_value(id)?;
        match n.ty {
            "h5prov:FileVersion" => Some(key.as_str()),
            _ => self.back(Rel::HadMember, id).first().copied(),
        }
    }

    fn label(&self, id: &str) -> String {
        let Some(n) = self.node(id) else {
            return id.to_string();
        };
        let version = self.version_of(id).and_then(|v| {
            let vn = self.node(v)?;
            let file = self
                .fwd(Rel::SpecializationOf, v)
                .first()
                .and_then(|f| self.node(f)?.text("h5prov:path"))
                .unwrap_or_default();
            Some((file, vn.text("h5prov:mtime")?, vn.text("h5prov:size")?))
        });
        let (file, mtime, size) = version.unwrap_or_default();
        match n.ty {
            "h5prov:Dataset" => format!(
                "{}:{} [version of {mtime}, {size} B]",
                n.text("h5prov:file").unwrap_or(file),
                n.text("h5prov:path").unwrap_or_default()
            ),
            "h5prov:FileVersion" => format!("{file} [version of {mtime}, {size} B]"),
            _ => id.to_string(),
        }
    }

    fn process(&self, id: &str) -> Process {
        let n = self.node(id);
        let t = |k: &str| n.and_then(|n| n.text(k)).unwrap_or_default();
        let agent = |ty: &str, k: &str| {
            self.fwd(Rel::WasAssociatedWith, id)
                .iter()
                .filter_map(|a| self.node(a))
                .find(|a| a.ty == ty)
                .and_then(|a| a.text(k))
                .unwrap_or_default()
        };
        Process {
            id: id.to_string(),
            program: base_name(&agent("prov:SoftwareAgent", "h5prov:exe")).to_string(),
            pid: t("h5prov:pid"),
            rank: t("h5prov:rank"),
            job: t("h5prov:job"),
            user: agent("prov:Person", "h5prov:user"),
            host: t("h5prov:host"),
            start: t("prov:startTime"),
        }
    }

    fn upstream(&self, id: &'g str, seen: &mut HashSet<&'g str>) -> Upstream {
        let mut up = Upstream {
            entity: id.to_string(),
            label: self.label(id),
            generated_by: Vec::new(),
        };
        if !seen.insert(id) {
            return up;
        }
        for p in self.fwd(Rel::WasGeneratedBy, id) {
            let derived = self.fwd(Rel::WasDerivedFrom, id);
            let inferred = !derived.is_empty();
            let from: Vec<&str> = if inferred {
                derived.to_vec()
            } else {
                // What the process used, less a file version one of whose datasets it
                // used (that dataset says more).
                let used = self.fwd(Rel::Used, p);
                used.iter()
                    .copied()
                    .filter(|u| !self.fwd(Rel::HadMember, u).iter().any(|d| used.contains(d)))
                    .collect()
            };
            up.generated_by.push(Generation {
                process: self.process(p),
                inferred,
                from: from.into_iter().map(|f| self.upstream(f, seen)).collect(),
            });
        }
        up
    }

    fn downstream(&self, id: &'g str, seen: &mut HashSet<&'g str>) -> Downstream {
        let mut down = Downstream {
            entity: id.to_string(),
            label: self.label(id),
            used_by: Vec::new(),
        };
        if !seen.insert(id) {
            return down;
        }
        let derived = self.back(Rel::WasDerivedFrom, id);
        for p in self.back(Rel::Used, id) {
            let made: Vec<&str> = derived
                .iter()
                .copied()
                .filter(|x| self.fwd(Rel::WasGeneratedBy, x).contains(p))
                .collect();
            down.used_by.push(Usage {
                process: self.process(p),
                generated: made.into_iter().map(|x| self.downstream(x, seen)).collect(),
            });
        }
        down
    }
}

/// The lineage of every version of `target` in `g`, oldest version first; an error naming
/// the target when the graph has no such file or dataset.
pub fn lineage(g: &Graph, target: &Target) -> Result<Vec<Lineage>, Error> {
    let ix = Index::new(g);
    let files: Vec<&str> = g
        .nodes
        .iter()
        .filter(|(_, n)| n.class == Class::Entity && n.ty == "h5prov:File")
        .filter(|(_, n)| n.text("h5prov:path").is_some_and(|p| target.names(&p)))
        .map(|(id, _)| id.as_str())
        .collect();
    let mut versions: Vec<&str> = files
        .iter()
        .flat_map(|f| ix.back(Rel::SpecializationOf, f).iter().copied())
        .collect();
    let mtime = |id: &str| match ix.node(id).and_then(|n| n.attr("h5prov:mtime")) {
        Some(super::Lit::Time(t)) => *t,
        _ => 0,
    };
    versions.sort_by_key(|v| (mtime(v), *v));
    versions.dedup();
    let entities: Vec<&str> = match &target.path {
        None => versions,
        Some(path) => versions
            .iter()
            .flat_map(|v| ix.fwd(Rel::HadMember, v).iter().copied())
            .filter(|d| {
                ix.node(d)
                    .and_then(|n| n.text("h5prov:path"))
                    .is_some_and(|p| &p == path)
            })
            .collect(),
    };
    if entities.is_empty() {
        let what = match &target.path {
            None => format!("file {:?}", target.file),
            Some(p) => format!("dataset {p:?} of file {:?}", target.file),
        };
        return Err(Error::Other(format!(
            "lineage: no {what} in the traces given (a file is matched by the path its \
             processes opened it by, or its tail)"
        )));
    }
    Ok(entities
        .into_iter()
        .map(|e| Lineage {
            upstream: ix.upstream(e, &mut HashSet::new()),
            downstream: ix.downstream(e, &mut HashSet::new()),
        })
        .collect())
}

fn process_line(p: &Process) -> String {
    format!(
        "{} (pid {}, rank {}, job {}, user {}, host {}, started {})",
        p.program,
        p.pid,
        p.rank,
        if p.job.is_empty() { "-" } else { &p.job },
        p.user,
        p.host,
        p.start
    )
}

fn write_up(out: &mut String, u: &Upstream, depth: usize) {
    let pad = "  ".repeat(depth);
    out.push_str(&format!("{pad}{}\n", u.label));
    for g in &u.generated_by {
        out.push_str(&format!(
            "{pad}  generated by {}\n",
            process_line(&g.process)
        ));
        if !g.from.is_empty() {
            let how = if g.inferred {
                "derived from (inferred)"
            } else {
                "which used"
            };
            out.push_str(&format!("{pad}    {how}:\n"));
        }
        for f in &g.from {
            write_up(out, f, depth + 3);
        }
    }
}

fn write_down(out: &mut String, d: &Downstream, depth: usize) {
    let pad = "  ".repeat(depth);
    out.push_str(&format!("{pad}{}\n", d.label));
    for u in &d.used_by {
        out.push_str(&format!("{pad}  used by {}\n", process_line(&u.process)));
        if !u.generated.is_empty() {
            out.push_str(&format!("{pad}    which generated (inferred):\n"));
        }
        for x in &u.generated {
            write_down(out, x, depth + 3);
        }
    }
}

/// The chains as indented text: per version, `upstream:` then `downstream:`.
pub fn to_text(all: &[Lineage]) -> String {
    let mut out = String::new();
    for l in all {
        out.push_str("upstream (who generated it, from what):\n");
        write_up(&mut out, &l.upstream, 1);
        out.push_str("downstream (who used it):\n");
        write_down(&mut out, &l.downstream, 1);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_match_path_tails() {
        let t = Target::parse("ana.h5:/stats").unwrap();
        assert_eq!(t.file, "ana.h5");
        assert_eq!(t.path.as_deref(), Some("/stats"));
        assert_eq!(Target::parse("run/sim.h5").unwrap().path, None);
        let e = Target::parse(":/x").unwrap_err().to_string();
        assert!(e.contains(":/x"), "{e}");
        let t = Target::parse("sim.h5").unwrap();
        assert!(t.names("sim.h5") && t.names("/run/sim.h5"));
        assert!(!t.names("/run/oldsim.h5") && !t.names("sim.h5.bak"));
        let abs = Target::parse("/run/sim.h5").unwrap();
        assert!(abs.names("sim.h5") && !abs.names("/other/sim.h5"));
    }
}
