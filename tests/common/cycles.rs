//! The cycle finder of the import-graph tests (`analyzer/tests/stages.rs`,
//! `connector/tests/layers.rs`), included by both with `#[path]`.

use std::collections::{BTreeMap, BTreeSet};

/// The cycles of a graph (`from` → the nodes it names), each as its nodes, sorted: its
/// strongly connected components of more than one node.
pub fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in edges.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, r) in &reached {
        let comp: Vec<String> = r
            .iter()
            .filter(|n| *n != *m && reached.get(n).is_some_and(|rn| rn.contains(*m)))
            .cloned()
            .chain([(*m).clone()])
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if comp.len() > 1 && !out.contains(&comp) {
            out.push(comp);
        }
    }
    out
}
