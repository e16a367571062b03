//! Reads the HDF5 version of an installation from its `include/H5public.h`.

use crate::error::{Context, Error, Result};
use std::fmt;
use std::path::Path;

/// An HDF5 library version (`H5_VERS_MAJOR.H5_VERS_MINOR.H5_VERS_RELEASE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// `H5_VERS_MAJOR`.
    pub major: u32,
    /// `H5_VERS_MINOR`.
    pub minor: u32,
    /// `H5_VERS_RELEASE`.
    pub release: u32,
}

/// The oldest HDF5 with the VOL connector ABI h5prov is written against.
pub const MINIMUM: Version = Version {
    major: 1,
    minor: 14,
    release: 0,
};

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.release)
    }
}

/// Parses the `#define H5_VERS_{MAJOR,MINOR,RELEASE} N` lines of `H5public.h`.
///
/// `source` names the file in error messages.
pub fn parse_h5public(text: &str, source: &str) -> Result<Version> {
    let mut major = None;
    let mut minor = None;
    let mut release = None;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let slot = match words.next() {
            Some("H5_VERS_MAJOR") => &mut major,
            Some("H5_VERS_MINOR") => &mut minor,
            Some("H5_VERS_RELEASE") => &mut release,
            _ => continue,
        };
        let value = words.next().unwrap_or("");
        *slot = Some(value.parse::<u32>().map_err(|_| {
            Error::new(format!(
                "{source}: cannot parse version number {value:?} in line {line:?}"
            ))
        })?);
    }
    match (major, minor, release) {
        (Some(major), Some(minor), Some(release)) => Ok(Version {
            major,
            minor,
            release,
        }),
        _ => Err(Error::new(format!(
            "{source}: no H5_VERS_MAJOR/H5_VERS_MINOR/H5_VERS_RELEASE defines found; is this an HDF5 header?"
        ))),
    }
}

/// Reads the version of the HDF5 installed under `prefix` (`<prefix>/include/H5public.h`).
pub fn read_installation(prefix: &Path) -> Result<Version> {
    let header = prefix.join("include").join("H5public.h");
    let text = std::fs::read_to_string(&header).context(|| {
        format!(
            "reading {} (is {} an HDF5 installation prefix?)",
            header.display(),
            prefix.display()
        )
    })?;
    parse_h5public(&text, &header.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H5PUBLIC_1_14_5: &str = r#"
/* Version numbers */
/**
 * For major interface/format changes
 */
#define H5_VERS_MAJOR 1
/**
 * For minor interface/format changes
 */
#define H5_VERS_MINOR 14
/**
 * For tweaks, bug-fixes, or development
 */
#define H5_VERS_RELEASE 5
#define H5_VERS_SUBRELEASE ""
#define H5_VERS_STR "1.14.5"
#define H5check() H5check_version(H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE)
"#;

    #[test]
    fn parses_1_14_5() {
        let v = parse_h5public(H5PUBLIC_1_14_5, "H5public.h").unwrap();
        assert_eq!(
            v,
            Version {
                major: 1,
                minor: 14,
                release: 5
            }
        );
        assert!(v >= MINIMUM);
        assert_eq!(v.to_string(), "1.14.5");
    }

    #[test]
    fn old_versions_compare_below_minimum() {
        let text = "#define H5_VERS_MAJOR\t1\t/* For major */\n#define H5_VERS_MINOR 10\n#define H5_VERS_RELEASE 8\n";
        let v = parse_h5public(text, "x").unwrap();
        assert_eq!(v.to_string(), "1.10.8");
        assert!(v < MINIMUM);
        let v2 = parse_h5public(
            "#define H5_VERS_MAJOR 2\n#define H5_VERS_MINOR 0\n#define H5_VERS_RELEASE 0\n",
            "x",
        )
        .unwrap();
        assert!(v2 >= MINIMUM);
    }

    #[test]
    fn missing_defines_are_an_error_naming_the_file() {
        let err = parse_h5public("#define H5_VERS_MAJOR 1\n", "/opt/h5/include/H5public.h")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/opt/h5/include/H5public.h"), "{err}");
        let err = parse_h5public(
            "#define H5_VERS_MAJOR one\n#define H5_VERS_MINOR 14\n#define H5_VERS_RELEASE 5\n",
            "f.h",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("\"one\""), "{err}");
    }
}
