//! An HDF5 CMake build tree: what the suites run from.

use crate::error::{Context, Error, Result};
use std::path::{Path, PathBuf};

/// Facts about a configured and built HDF5 build tree, read from its `CMakeCache.txt`.
#[derive(Debug, Clone)]
pub struct BuildTree {
    /// The build directory.
    pub dir: PathBuf,
    /// `CMAKE_HOME_DIRECTORY`: the HDF5 source tree.
    pub source_dir: PathBuf,
    /// `CMAKE_INSTALL_PREFIX`.
    pub install_prefix: PathBuf,
    /// `CMAKE_C_COMPILER` (mpicc for parallel builds).
    pub c_compiler: String,
    /// `HDF5_ENABLE_PARALLEL`.
    pub parallel: bool,
}

/// Reads `KEY:TYPE=value` from CMakeCache.txt text.
pub fn cmake_cache_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let (lhs, value) = line.split_once('=')?;
        let name = lhs.split_once(':').map_or(lhs, |(n, _)| n);
        (name == key).then_some(value)
    })
}

impl BuildTree {
    /// Opens and validates a build tree; the error says how to get one.
    pub fn open(dir: &Path) -> Result<Self> {
        let dir = dir
            .canonicalize()
            .map_err(|e| Error::new(format!(
                "no HDF5 build tree at {} ({e}); run `hdf5-test-harness build-hdf5` first, or pass --build-dir",
                dir.display()
            )))?;
        let cache_path = dir.join("CMakeCache.txt");
        let text = std::fs::read_to_string(&cache_path).context(|| {
            format!(
                "reading {} (is {} an HDF5 CMake build tree?)",
                cache_path.display(),
                dir.display()
            )
        })?;
        let get = |k: &str| {
            cmake_cache_value(&text, k)
                .map(str::to_string)
                .ok_or_else(|| Error::new(format!("{}: no {k} entry", cache_path.display())))
        };
        let tree = BuildTree {
            source_dir: PathBuf::from(get("CMAKE_HOME_DIRECTORY")?),
            install_prefix: PathBuf::from(get("CMAKE_INSTALL_PREFIX")?),
            c_compiler: get("CMAKE_C_COMPILER")?,
            parallel: cmake_cache_value(&text, "HDF5_ENABLE_PARALLEL") == Some("ON"),
            dir,
        };
        for (what, path) in [
            (
                "API test program (configure with -DHDF5_TEST_API=ON and build)",
                tree.dir.join("bin/h5_api_test"),
            ),
            ("HDF5 library", tree.dir.join("bin/libhdf5.so")),
            (
                "pass-through VOL test folder (-DHDF5_TEST_PASSTHROUGH_VOL=ON)",
                tree.dir.join("test/vol_native/testfiles"),
            ),
            (
                "tools tests (-DHDF5_BUILD_TOOLS=ON)",
                tree.dir.join("tools/CTestTestfile.cmake"),
            ),
            (
                "HDF5 source tree",
                tree.source_dir.join("config/cmake/volTest.cmake"),
            ),
        ] {
            if !path.exists() {
                return Err(Error::new(format!(
                    "HDF5 build tree {} is incomplete: missing {what} at {}; re-run `hdf5-test-harness build-hdf5`",
                    tree.dir.display(),
                    path.display()
                )));
            }
        }
        Ok(tree)
    }

    /// Identifies this build: results are reused only for the same id.
    pub fn build_id(&self) -> String {
        let lib = self.dir.join("bin/libhdf5.so");
        let (size, mtime) = std::fs::metadata(&lib)
            .map(|m| {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                (m.len(), mtime)
            })
            .unwrap_or((0, 0));
        format!("{}|libhdf5.so:{size}:{mtime}", self.dir.display())
    }

    /// Include directories for compiling against this build: the install prefix's
    /// `include/` when installed, else the build and source trees' `src/`.
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        let installed = self.install_prefix.join("include");
        if installed.join("H5public.h").is_file() {
            vec![installed]
        } else {
            vec![self.dir.join("src"), self.source_dir.join("src")]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cache_values() {
        let text = "// comment\nCMAKE_INSTALL_PREFIX:PATH=/c/install\nHDF5_ENABLE_PARALLEL:BOOL=OFF\nCMAKE_HOME_DIRECTORY:INTERNAL=/c/src\nX=y=z\n";
        assert_eq!(
            cmake_cache_value(text, "CMAKE_INSTALL_PREFIX"),
            Some("/c/install")
        );
        assert_eq!(cmake_cache_value(text, "HDF5_ENABLE_PARALLEL"), Some("OFF"));
        assert_eq!(cmake_cache_value(text, "X"), Some("y=z"));
        assert_eq!(cmake_cache_value(text, "CMAKE"), None);
    }
}
