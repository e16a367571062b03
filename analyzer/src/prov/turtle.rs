//! The [`Graph`] as PROV-O in Turtle (<https://www.w3.org/TR/prov-o/>,
//! <https://www.w3.org/TR/turtle/>), written directly: nodes as full IRIs in the
//! `h5prov:` namespace, vocabulary as prefixed names, literals escaped.

use super::{utc_datetime, Class, Graph, Lit, NAMESPACE, PROV_NAMESPACE, XSD_NAMESPACE};
use std::fmt::Write as _;

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

/// The Turtle document of `g`.
pub fn to_turtle(g: &Graph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "@prefix prov: {} .", iri(PROV_NAMESPACE));
    let _ = writeln!(out, "@prefix h5prov: {} .", iri(NAMESPACE));
    let _ = writeln!(out, "@prefix xsd: {} .\n", iri(XSD_NAMESPACE));
    for (id, n) in &g.nodes {
        let class = match n.class {
            Class::Entity => "prov:Entity",
            Class::Activity => "prov:Activity",
            Class::Agent => "prov:Agent",
        };
        let _ = write!(out, "{} a {class}, {}", node_iri(id), n.ty);
        for (k, v) in &n.attrs {
            let _ = write!(out, " ;\n    {k} {}", value(v));
        }
        out.push_str(" .\n");
    }
    out.push('\n');
    for r in &g.relations {
        let s = r.rel.spec();
        let (from, to) = (node_iri(&r.from), node_iri(&r.to));
        if let Some(p) = s.direct {
            let _ = writeln!(out, "{from} {p} {to} .");
        }
        if let Some((q, class, role)) = s.qualified {
            if s.direct.is_none() || r.inferred {
                let inferred = if r.inferred {
                    " ; h5prov:inferred true"
                } else {
                    ""
                };
                let _ = writeln!(out, "{from} {q} [ a {class} ; {role} {to}{inferred} ] .");
            }
        }
    }
    out
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
