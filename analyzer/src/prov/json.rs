//! The [`Graph`] as a W3C PROV-JSON document (<https://www.w3.org/submissions/prov-json/>).

use super::{utc_datetime, Class, Graph, Lit, NAMESPACE, XSD_NAMESPACE};
use serde_json::{json, Map, Value};

/// An attribute value: times of `prov:` attributes (`prov:startTime`) as the plain
/// strings PROV-JSON gives them, others typed `xsd:dateTime`.
fn value(key: &str, v: &Lit) -> Value {
    match v {
        Lit::Str(s) => Value::from(s.as_str()),
        Lit::Int(n) => Value::from(*n),
        Lit::Signed(n) => Value::from(*n),
        Lit::Time(ns) if key.starts_with("prov:") => Value::from(utc_datetime(*ns)),
        Lit::Time(ns) => json!({"$": utc_datetime(*ns), "type": "xsd:dateTime"}),
    }
}

/// The PROV-JSON document of `g`. Relations get blank ids numbered per kind in the order
/// made (`_:used3`).
pub fn to_json(g: &Graph) -> Value {
    let mut sections: Map<String, Value> = Map::new();
    sections.insert(
        "prefix".into(),
        json!({"h5prov": NAMESPACE, "xsd": XSD_NAMESPACE}),
    );
    for (id, n) in &g.nodes {
        let section = match n.class {
            Class::Entity => "entity",
            Class::Activity => "activity",
            Class::Agent => "agent",
        };
        let mut o = Map::new();
        o.insert(
            "prov:type".into(),
            json!({"$": n.ty, "type": "prov:QUALIFIED_NAME"}),
        );
        for (k, v) in &n.attrs {
            o.insert((*k).into(), value(k, v));
        }
        sections
            .entry(section)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("a section is an object")
            .insert(format!("h5prov:{id}"), Value::Object(o));
    }
    let mut counters: std::collections::HashMap<&str, usize> = Default::default();
    for r in &g.relations {
        let s = r.rel.spec();
        let n = counters.entry(s.name).or_default();
        *n += 1;
        let mut o = Map::new();
        o.insert(s.from.into(), Value::from(format!("h5prov:{}", r.from)));
        o.insert(s.to.into(), Value::from(format!("h5prov:{}", r.to)));
        if r.inferred {
            o.insert("h5prov:inferred".into(), Value::from(true));
        }
        sections
            .entry(s.name)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("a section is an object")
            .insert(format!("_:{}{n}", s.name), Value::Object(o));
    }
    Value::Object(sections)
}
