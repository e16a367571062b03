//! `env`: shell `export` lines that put an HDF5 installation first.

use crate::process::shell_quote;
use std::path::{Path, PathBuf};

/// Prepends `dir` to a colon-separated path list unless it is already an element.
pub fn prepend(dir: &str, current: Option<&str>) -> String {
    match current.filter(|c| !c.is_empty()) {
        None => dir.to_string(),
        Some(c) if c.split(':').any(|e| e == dir) => c.to_string(),
        Some(c) => format!("{dir}:{c}"),
    }
}

/// The library directory of an installation: `lib64/` if it has libhdf5 and `lib/` does not.
pub fn lib_dir(install: &Path) -> PathBuf {
    let has = |d: &str| install.join(d).join("libhdf5.so").exists();
    if !has("lib") && has("lib64") {
        install.join("lib64")
    } else {
        install.join("lib")
    }
}

/// `(name, value)` pairs for `HDF5_DIR`, `LD_LIBRARY_PATH` and `PATH`, given the current
/// values of the latter two.
pub fn exports(
    install: &Path,
    lib: &Path,
    ld_library_path: Option<&str>,
    path: Option<&str>,
) -> Vec<(String, String)> {
    vec![
        ("HDF5_DIR".into(), install.display().to_string()),
        (
            "LD_LIBRARY_PATH".into(),
            prepend(&lib.display().to_string(), ld_library_path),
        ),
        (
            "PATH".into(),
            prepend(&install.join("bin").display().to_string(), path),
        ),
    ]
}

/// Renders `export NAME='value'` lines.
pub fn render(vars: &[(String, String)]) -> String {
    vars.iter()
        .map(|(k, v)| format!("export {k}={}\n", shell_quote(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepends_once() {
        assert_eq!(prepend("/h/lib", None), "/h/lib");
        assert_eq!(prepend("/h/lib", Some("")), "/h/lib");
        assert_eq!(prepend("/h/lib", Some("/usr/lib")), "/h/lib:/usr/lib");
        assert_eq!(prepend("/h/lib", Some("/a:/h/lib")), "/a:/h/lib");
    }

    #[test]
    fn renders_exports() {
        let v = exports(
            Path::new("/c/install"),
            Path::new("/c/install/lib"),
            None,
            Some("/usr/bin"),
        );
        assert_eq!(
            render(&v),
            "export HDF5_DIR=/c/install\nexport LD_LIBRARY_PATH=/c/install/lib\nexport PATH=/c/install/bin:/usr/bin\n"
        );
    }
}
