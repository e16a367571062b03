//! An HDF5 CMake build tree: what the suites run from.

use crate::error::{Context, Error, Result};
use crate::h5version::{self, Version};
use crate::results::Suite;
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
    /// `HDF5_ENABLE_THREADSAFE` (the `threadsafe` variant).
    pub threadsafe: bool,
    /// The HDF5 version of the source tree (`src/H5public.h`), if readable.
    pub version: Option<Version>,
    /// The directory whose ctest list has the `h5_api_test_<area>` tests: the build tree
    /// itself (HDF5 1.14, `-DHDF5_TEST_API=ON`), or, for HDF5 2.x, the v2 variant's
    /// [`crate::paths::API_TEST_DIR`] next to it (1.14.5's API tests built against it).
    pub api_dir: Option<PathBuf>,
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
        let source_dir = PathBuf::from(get("CMAKE_HOME_DIRECTORY")?);
        let version = std::fs::read_to_string(source_dir.join("src/H5public.h"))
            .ok()
            .and_then(|t| h5version::parse_h5public(&t, "H5public.h").ok());
        let api_dir = if dir.join("bin/h5_api_test").is_file() {
            Some(dir.clone())
        } else {
            dir.parent()
                .map(|p| p.join(crate::paths::API_TEST_DIR))
                .filter(|d| d.join("CTestTestfile.cmake").is_file())
        };
        let tree = BuildTree {
            source_dir,
            install_prefix: PathBuf::from(get("CMAKE_INSTALL_PREFIX")?),
            c_compiler: get("CMAKE_C_COMPILER")?,
            parallel: cmake_cache_value(&text, "HDF5_ENABLE_PARALLEL") == Some("ON"),
            threadsafe: cmake_cache_value(&text, "HDF5_ENABLE_THREADSAFE") == Some("ON"),
            version,
            api_dir,
            dir,
        };
        let lib = tree.dir.join("bin/libhdf5.so");
        if !lib.exists() {
            return Err(Error::new(format!(
                "HDF5 build tree {} is incomplete: missing the HDF5 library at {}; re-run `hdf5-test-harness build-hdf5`",
                tree.dir.display(),
                lib.display()
            )));
        }
        Ok(tree)
    }

    /// True when the tree builds HDF5 2.x.
    pub fn is_2x(&self) -> bool {
        self.version.is_some_and(|v| v.major >= 2)
    }

    /// Checks that the tree has what `suites` run; the error says what is missing and how
    /// to get it (or, for HDF5 2.x, why a suite cannot run at all).
    pub fn require(&self, suites: &[Suite]) -> Result<()> {
        if self.is_2x() {
            if let Some(why) = suites
                .iter()
                .find_map(|&s| crate::hdf5v2::missing_suite_reason(s))
            {
                return Err(Error::new(format!(
                    "{why} (build tree {})",
                    self.dir.display()
                )));
            }
            if suites.contains(&Suite::Api) && self.api_dir.is_none() {
                let expected = self.dir.parent().map_or_else(
                    || PathBuf::from(crate::paths::API_TEST_DIR),
                    |p| p.join(crate::paths::API_TEST_DIR),
                );
                return Err(Error::new(format!(
                    "HDF5 2.x build tree {} has no API tests next to it (expected {}); build them with \
                     `hdf5-test-harness build-hdf5 --variant v2` and run with --variant v2",
                    self.dir.display(),
                    expected.join("CTestTestfile.cmake").display()
                )));
            }
            return Ok(());
        }
        let mut needed = Vec::new();
        for &suite in suites {
            match suite {
                Suite::Api => needed.push((
                    "API test program (configure with -DHDF5_TEST_API=ON and build)",
                    self.dir.join("bin/h5_api_test"),
                )),
                Suite::Vol => needed.extend([
                    (
                        "pass-through VOL test folder (-DHDF5_TEST_PASSTHROUGH_VOL=ON)",
                        self.dir.join("test/vol_native/testfiles"),
                    ),
                    (
                        "HDF5 source tree",
                        self.source_dir.join("config/cmake/volTest.cmake"),
                    ),
                ]),
                Suite::Tools => needed.push((
                    "tools tests (-DHDF5_BUILD_TOOLS=ON)",
                    self.dir.join("tools/CTestTestfile.cmake"),
                )),
                Suite::Testpar => needed.push((
                    "parallel test folder (-DHDF5_TEST_PARALLEL=ON)",
                    self.dir.join("testpar"),
                )),
            }
        }
        for (what, path) in needed {
            if !path.exists() {
                return Err(Error::new(format!(
                    "HDF5 build tree {} is incomplete: missing {what} at {}; re-run `hdf5-test-harness build-hdf5`",
                    self.dir.display(),
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// Identifies this build: results are reused only for the same id. It includes the
    /// API test program when that is built apart from the library (HDF5 2.x).
    pub fn build_id(&self) -> String {
        let stat = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| {
                    let mtime = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_secs());
                    (m.len(), mtime)
                })
                .unwrap_or((0, 0))
        };
        let (size, mtime) = stat(&self.dir.join("bin/libhdf5.so"));
        let mut id = format!("{}|libhdf5.so:{size}:{mtime}", self.dir.display());
        if let Some(api) = self.api_dir.as_ref().filter(|d| **d != self.dir) {
            let (size, mtime) = stat(&api.join("bin/h5_api_test"));
            id.push_str(&format!("|h5_api_test:{size}:{mtime}"));
        }
        id
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
