//! The [`Graph`] as a W3C PROV-JSON document (<https://www.w3.org/submissions/prov-json/>),
//! written straight to a writer (no document tree in memory: a million-dataset graph is
//! hundreds of MB of JSON).

use super::{utc_datetime, Class, Graph, Lit, NAMESPACE, RELATIONS, XSD_NAMESPACE};
use std::io::{self, Write};

/// `s` as a JSON string.
fn string(w: &mut dyn Write, s: &str) -> io::Result<()> {
    serde_json::to_writer(&mut *w, s).map_err(io::Error::from)
}

/// An attribute value: times of `prov:` attributes (`prov:startTime`) as the plain
/// strings PROV-JSON gives them, others typed `xsd:dateTime`.
fn value(w: &mut dyn Write, key: &str, v: &Lit) -> io::Result<()> {
    match v {
        Lit::Str(s) => string(w, s),
        Lit::Int(n) => write!(w, "{n}"),
        Lit::Signed(n) => write!(w, "{n}"),
        Lit::Time(ns) if key.starts_with("prov:") => string(w, &utc_datetime(*ns)),
        Lit::Time(ns) => {
            write!(w, "{{\"$\": ")?;
            string(w, &utc_datetime(*ns))?;
            write!(w, ", \"type\": \"xsd:dateTime\"}}")
        }
    }
}

/// Writes the PROV-JSON document of `g` to `w`. Relations get blank ids numbered per kind
/// in the order made (`_:used3`).
pub fn write_json(g: &Graph, w: &mut dyn Write) -> io::Result<()> {
    write!(w, "{{\n  \"prefix\": {{\"h5prov\": ")?;
    string(w, NAMESPACE)?;
    write!(w, ", \"xsd\": ")?;
    string(w, XSD_NAMESPACE)?;
    write!(w, "}}")?;
    for (class, section) in [
        (Class::Entity, "entity"),
        (Class::Activity, "activity"),
        (Class::Agent, "agent"),
    ] {
        let mut first = true;
        for (id, n) in g.nodes.iter().filter(|(_, n)| n.class == class) {
            write!(w, "{}", if first { ",\n  \"" } else { ",\n    \"" })?;
            if first {
                write!(w, "{section}\": {{\n    \"")?;
                first = false;
            }
            // Ids are percent-encoded: nothing in them needs a JSON escape.
            write!(w, "h5prov:{id}\": {{\"prov:type\": {{\"$\": ")?;
            string(w, n.ty)?;
            write!(w, ", \"type\": \"prov:QUALIFIED_NAME\"}}")?;
            for (k, v) in &n.attrs {
                write!(w, ", \"{k}\": ")?;
                value(w, k, v)?;
            }
            write!(w, "}}")?;
        }
        if !first {
            write!(w, "\n  }}")?;
        }
    }
    for s in RELATIONS {
        let mut n = 0usize;
        for r in g.relations.iter().filter(|r| r.rel == s.rel) {
            n += 1;
            if n == 1 {
                write!(w, ",\n  \"{}\": {{\n    ", s.name)?;
            } else {
                write!(w, ",\n    ")?;
            }
            write!(
                w,
                "\"_:{}{n}\": {{\"{}\": \"h5prov:{}\", \"{}\": \"h5prov:{}\"",
                s.name, s.from, r.from, s.to, r.to
            )?;
            if r.inferred {
                write!(w, ", \"h5prov:inferred\": true")?;
            }
            write!(w, "}}")?;
        }
        if n > 0 {
            write!(w, "\n  }}")?;
        }
    }
    writeln!(w, "\n}}")
}

#[cfg(test)]
mod tests {
    use super::super::{Node, Rel};
    use super::*;

    #[test]
    fn a_small_graph_is_valid_json_with_escaped_strings() {
        let mut g = Graph::default();
        g.nodes.insert(
            "path-a%22b".into(),
            Node {
                class: Class::Entity,
                ty: "h5prov:File",
                attrs: vec![
                    ("h5prov:path", Lit::Str("a\"b\n".into())),
                    ("h5prov:mtime", Lit::Time(0)),
                ],
            },
        );
        g.nodes.insert(
            "p".into(),
            Node {
                class: Class::Activity,
                ty: "h5prov:Process",
                attrs: vec![
                    ("prov:startTime", Lit::Time(0)),
                    ("h5prov:rank", Lit::Signed(-1)),
                ],
            },
        );
        g.relate(Rel::Used, "p", "path-a%22b", false);
        g.relate(Rel::WasDerivedFrom, "path-a%22b", "path-a%22b", true);
        let mut out = Vec::new();
        write_json(&g, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let e = &v["entity"]["h5prov:path-a%22b"];
        assert_eq!(e["h5prov:path"], "a\"b\n");
        assert_eq!(e["h5prov:mtime"]["type"], "xsd:dateTime");
        assert_eq!(
            v["activity"]["h5prov:p"]["prov:startTime"],
            "1970-01-01T00:00:00.000000000Z"
        );
        assert_eq!(v["used"]["_:used1"]["prov:entity"], "h5prov:path-a%22b");
        assert_eq!(
            v["wasDerivedFrom"]["_:wasDerivedFrom1"]["h5prov:inferred"],
            true
        );
        assert!(v.get("agent").is_none());
    }
}
