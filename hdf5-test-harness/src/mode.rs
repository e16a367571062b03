//! Connector modes: which `HDF5_VOL_CONNECTOR` string a suite runs with.

use crate::error::{Error, Result};

/// h5prov's registered VOL connector value.
pub const H5PROV_CONNECTOR_VALUE: u32 = 416;

/// A labelled connector configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    /// Short name used in output and file names (`native`, `pass_through`, or a custom label).
    pub label: String,
    /// The `HDF5_VOL_CONNECTOR` value; `None` runs natively with the variable unset.
    pub connector: Option<String>,
}

/// The built-in mode names with their connector strings and a description.
pub fn presets() -> Vec<(&'static str, Option<String>, &'static str)> {
    vec![
        ("native", None, "HDF5_VOL_CONNECTOR unset: the native connector (the baseline)"),
        (
            "pass_through",
            Some("pass_through under_vol=0;under_info={}".into()),
            "HDF5's built-in pass-through connector over native",
        ),
        (
            "h5prov",
            Some("h5prov under_vol=0;under_info={}".into()),
            "h5prov over native",
        ),
        (
            "h5prov-over-pt",
            Some("h5prov under_vol=1;under_info={under_vol=0;under_info={}}".into()),
            "h5prov over pass_through over native",
        ),
        (
            "pt-over-h5prov",
            Some(format!(
                "pass_through under_vol={H5PROV_CONNECTOR_VALUE};under_info={{under_vol=0;under_info={{}}}}"
            )),
            "pass_through over h5prov over native (h5prov loaded by its value 416)",
        ),
    ]
}

/// True when `label` is usable as a mode label (and a directory name).
pub fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label != "."
        && label != ".."
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl Mode {
    /// The native baseline.
    pub fn native() -> Self {
        Mode {
            label: "native".into(),
            connector: None,
        }
    }

    /// Parses a preset name or `label=<connector string>`.
    pub fn parse(spec: &str) -> Result<Self> {
        let spec = spec.trim();
        if let Some((label, connector, _)) =
            presets().into_iter().find(|(name, _, _)| *name == spec)
        {
            return Ok(Mode {
                label: label.to_string(),
                connector,
            });
        }
        let Some((label, connector)) = spec.split_once('=') else {
            return Err(Error::new(format!(
                "unknown mode {spec:?}: use one of {} or 'label=<connector string>'",
                preset_names()
            )));
        };
        let (label, connector) = (label.trim(), connector.trim());
        if !valid_label(label) {
            return Err(Error::new(format!(
                "mode {spec:?}: {label:?} is not a valid label (letters, digits, '_', '-', '.'); \
                 write custom modes as 'label=<connector string>', e.g. \
                 'traced=h5prov under_vol=0;under_info={{}};level=element'"
            )));
        }
        if presets().iter().any(|(name, _, _)| *name == label) {
            return Err(Error::new(format!(
                "mode {spec:?}: label {label:?} is a preset name; choose another label"
            )));
        }
        if connector.is_empty() {
            return Err(Error::new(format!("mode {spec:?}: empty connector string")));
        }
        Ok(Mode {
            label: label.to_string(),
            connector: if connector == "native" {
                None
            } else {
                Some(connector.to_string())
            },
        })
    }

    /// True for the native baseline (no connector string).
    pub fn is_native(&self) -> bool {
        self.connector.is_none()
    }

    /// The connector name HDF5 must report for this mode: the connector string's first word.
    pub fn expected_connector_name(&self) -> &str {
        match &self.connector {
            None => "native",
            Some(c) => c.split_whitespace().next().unwrap_or("native"),
        }
    }

    /// True when the top connector is built into HDF5 (no plugin needs loading).
    pub fn top_is_builtin(&self) -> bool {
        matches!(self.expected_connector_name(), "native" | "pass_through")
    }
}

/// The preset names, comma-separated.
pub fn preset_names() -> String {
    presets()
        .iter()
        .map(|(n, _, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse() {
        assert_eq!(Mode::parse("native").unwrap(), Mode::native());
        let pt = Mode::parse("pass_through").unwrap();
        assert_eq!(
            pt.connector.as_deref(),
            Some("pass_through under_vol=0;under_info={}")
        );
        assert_eq!(pt.expected_connector_name(), "pass_through");
        assert!(pt.top_is_builtin());
        let pt_over = Mode::parse("pt-over-h5prov").unwrap();
        assert_eq!(
            pt_over.connector.as_deref(),
            Some("pass_through under_vol=416;under_info={under_vol=0;under_info={}}")
        );
        let h = Mode::parse("h5prov-over-pt").unwrap();
        assert_eq!(h.expected_connector_name(), "h5prov");
        assert!(!h.top_is_builtin());
    }

    #[test]
    fn custom_modes() {
        let m = Mode::parse("traced=h5prov under_vol=0;under_info={};level=element;path=/tmp/x")
            .unwrap();
        assert_eq!(m.label, "traced");
        assert_eq!(
            m.connector.as_deref(),
            Some("h5prov under_vol=0;under_info={};level=element;path=/tmp/x")
        );
        assert_eq!(m.expected_connector_name(), "h5prov");
        assert!(Mode::parse("nat2=native").unwrap().is_native());
    }

    #[test]
    fn bad_modes_are_explained() {
        // A raw connector string is not a label.
        let err = Mode::parse("pass_through under_vol=0;under_info={}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a valid label"), "{err}");
        let err = Mode::parse("bogus").unwrap_err().to_string();
        assert!(err.contains("pass_through"), "{err}");
        assert!(Mode::parse("native=pass_through").is_err());
        assert!(Mode::parse("x=").is_err());
        assert!(Mode::parse("a/b=native").is_err());
    }
}
