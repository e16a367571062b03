//! The [`Graph`] as PROV-O in Turtle (<https://www.w3.org/TR/prov-o/>,
//! <https://www.w3.org/TR/turtle/>), written directly: nodes as full IRIs in the
//! `h5prov:` namespace, vocabulary as prefixed names, literals escaped.

use super::{utc_datetime, Class, Graph, Lit, NAMESPACE, PROV_NAMESPACE, XSD_NAMESPACE};
use std::fmt::Write as _;
use std::io;

/// `<IRI>` with the characters an `IRIREF` may not hold (Turtle §6.3: controls, space,
/// `<>"{}|^`` ` ``\`) percent-encoded. Node ids are percent-encoded already; this is the
/// second line of defence.
pub fn iri(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('<');
    for c in s.chars() {
        if c <= ' ' || c == '\u{7f}' || "<>\"{}|^`\\".contains(c) {
            let _ = write!(out, "%{:02X}", c as u32);
        } else {
            out.push(c);
        }
    }
    out.push('>');
    out
}

/// A string literal, `"..."` with `\`, `"` and control characters escaped (Turtle
/// `STRING_LITERAL_QUOTE`).
pub fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn node_iri(id: &str) -> String {
    iri(&format!("{NAMESPACE}{id}"))
}

fn value(v: &Lit) -> String {
    match v {
        Lit::Str(s) => literal(s),
        Lit::Int(n) => n.to_string(),
        Lit::Signed(n) => n.to_string(),
        Lit::Time(ns) => format!("{}^^xsd:dateTime", literal(&utc_datetime(*ns))),
    }
}

/// Writes the Turtle document of `g` to `w`.
pub fn write_turtle(g: &Graph, w: &mut dyn io::Write) -> io::Result<()> {
    writeln!(w, "@prefix prov: {} .", iri(PROV_NAMESPACE))?;
    writeln!(w, "@prefix h5prov: {} .", iri(NAMESPACE))?;
    writeln!(w, "@prefix xsd: {} .\n", iri(XSD_NAMESPACE))?;
    let mut line = String::new();
    for (id, n) in &g.nodes {
        let class = match n.class {
            Class::Entity => "prov:Entity",
            Class::Activity => "prov:Activity",
            Class::Agent => "prov:Agent",
        };
        line.clear();
        let _ = write!(line, "{} a {class}, {}", node_iri(id), n.ty);
        for (k, v) in &n.attrs {
            let _ = write!(line, " ;\n    {k} {}", value(v));
        }
        line.push_str(" .\n");
        w.write_all(line.as_bytes())?;
    }
    writeln!(w)?;
    for r in &g.relations {
        let s = r.rel.spec();
        let (from, to) = (node_iri(&r.from), node_iri(&r.to));
        if let Some(p) = s.direct {
            writeln!(w, "{from} {p} {to} .")?;
        }
        if let Some((q, class, role)) = s.qualified {
            if s.direct.is_none() || r.inferred {
                let inferred = if r.inferred {
                    " ; h5prov:inferred true"
                } else {
                    ""
                };
                writeln!(w, "{from} {q} [ a {class} ; {role} {to}{inferred} ] .")?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_iris_escape() {
        assert_eq!(literal("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
        assert_eq!(iri("x y>z\\"), "<x%20y%3Ez%5C>");
    }
}
