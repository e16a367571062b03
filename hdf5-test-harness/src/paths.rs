//! Where things live: the cache, the HDF5 variants, the repository, the `.deps` links.

use crate::error::{Error, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Upstream HDF5 version the bootstrap builds for the `serial` and `parallel` variants.
pub const HDF5_VERSION: &str = "1.14.5";
/// The Debian source package version that provides it (suite `trixie`).
pub const DEBIAN_SOURCE_VERSION: &str = "1.14.5+repack-3";
/// Upstream HDF5 version of the `v2` variant (see [`crate::hdf5v2`]).
pub const HDF5_2_VERSION: &str = "2.2.0";

/// Which HDF5 build: serial, parallel (MPI, issue 7), thread-safe, or serial HDF5 2.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Serial HDF5 1.14.5 (the default).
    Serial,
    /// Parallel HDF5 1.14.5 built with OpenMPI's `mpicc`.
    Parallel,
    /// Serial HDF5 1.14.5 built thread-safe (`HDF5_ENABLE_THREADSAFE`: one global API lock,
    /// per-thread error stacks). HDF5 1.14 supports that only without its high-level
    /// library, C++ and Fortran, so those are off; the API, VOL-mode `test/` (with
    /// `ttsafe`, which really runs threads here) and tools suites all build.
    Threadsafe,
    /// Serial HDF5 2.2.0, from the crates.io crate that vendors its library source. It has no
    /// `test/` or `tools/`: only the API suite runs (HDF5 1.14.5's `test/API`, built against it).
    V2,
}

impl Variant {
    /// Every variant, in the order help texts list them.
    pub const ALL: [Variant; 4] = [
        Variant::Serial,
        Variant::Parallel,
        Variant::Threadsafe,
        Variant::V2,
    ];

    /// `serial`, `parallel`, `threadsafe` or `v2`: the `--variant` value.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Serial => "serial",
            Variant::Parallel => "parallel",
            Variant::Threadsafe => "threadsafe",
            Variant::V2 => "v2",
        }
    }

    /// The upstream HDF5 version the variant builds.
    pub fn hdf5_version(self) -> &'static str {
        match self {
            Variant::Serial | Variant::Parallel | Variant::Threadsafe => HDF5_VERSION,
            Variant::V2 => HDF5_2_VERSION,
        }
    }

    /// True for the HDF5 2.x variant.
    pub fn is_v2(self) -> bool {
        self == Variant::V2
    }

    /// The variant's directory name under the cache root: `hdf5-1.14.5-serial`,
    /// `hdf5-1.14.5-parallel`, `hdf5-1.14.5-threadsafe`, `hdf5-2.2.0-serial`.
    pub fn dir_name(self) -> String {
        let kind = match self {
            Variant::Parallel => "parallel",
            Variant::Threadsafe => "threadsafe",
            Variant::Serial | Variant::V2 => "serial",
        };
        format!("hdf5-{}-{kind}", self.hdf5_version())
    }

    /// Names of the links under `<repo>/.deps` to the install and build trees.
    pub fn link_names(self) -> (&'static str, &'static str) {
        match self {
            Variant::Serial => ("hdf5", "hdf5-build"),
            Variant::Parallel => ("hdf5-parallel", "hdf5-parallel-build"),
            Variant::Threadsafe => ("hdf5-threadsafe", "hdf5-threadsafe-build"),
            Variant::V2 => ("hdf5-2", "hdf5-2-build"),
        }
    }

    /// The default plugin directory of `run` (relative to the repository): the one
    /// `libh5prov.so` serves HDF5 1.14 (serial or thread-safe) and 2.x alike; the parallel
    /// build has its own.
    pub fn default_plugin_dir(self) -> &'static str {
        match self {
            Variant::Serial | Variant::Threadsafe | Variant::V2 => ".deps/plugins",
            Variant::Parallel => ".deps/plugins-parallel",
        }
    }

    /// The default results directory of `run` (relative to the repository). The v2 and
    /// thread-safe variants have their own: their api/vol/tools results would otherwise
    /// replace those of the serial 1.14.5 build.
    pub fn default_results_dir(self) -> &'static str {
        match self {
            Variant::Serial | Variant::Parallel => "target/harness",
            Variant::Threadsafe => "target/harness-threadsafe",
            Variant::V2 => "target/harness-v2",
        }
    }

    /// True for the 1.14.5 variants built from Debian's source package (they share it).
    pub fn is_debian_source(self) -> bool {
        !self.is_v2()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "serial" => Ok(Variant::Serial),
            "parallel" => Ok(Variant::Parallel),
            "threadsafe" | "thread-safe" | "ts" => Ok(Variant::Threadsafe),
            "v2" | "hdf5-2" => Ok(Variant::V2),
            _ => Err(Error::new(format!(
                "unknown variant {s:?} (expected serial, parallel, threadsafe or v2)"
            ))),
        }
    }
}

/// The cache root: `$H5PROV_CACHE`, else `$XDG_CACHE_HOME/h5prov`, else `~/.cache/h5prov`.
///
/// `var` looks up environment variables; empty values count as unset, and a relative
/// `XDG_CACHE_HOME` is ignored as the XDG spec requires.
pub fn cache_root(var: impl Fn(&str) -> Option<String>) -> Result<PathBuf> {
    let get = |k: &str| var(k).filter(|v| !v.is_empty());
    if let Some(dir) = get("H5PROV_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = get("XDG_CACHE_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Ok(Path::new(&dir).join("h5prov"));
    }
    match get("HOME") {
        Some(home) => Ok(Path::new(&home).join(".cache").join("h5prov")),
        None => Err(Error::new(
            "cannot choose a cache directory: none of H5PROV_CACHE, XDG_CACHE_HOME, HOME is set",
        )),
    }
}

/// The directories of one HDF5 variant in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantDirs {
    /// `<root>/hdf5-1.14.5-<variant>` (`hdf5-2.2.0-serial` for v2).
    pub root: PathBuf,
    /// Downloaded Debian source package files (v2: the throwaway cargo manifest whose
    /// `cargo vendor` fetches the source crate).
    pub download: PathBuf,
    /// Extracted upstream source (Debian patches not applied; v2: the crate's `ext/hdf5`).
    pub src: PathBuf,
    /// CMake build tree, kept: the suites run from it.
    pub build: PathBuf,
    /// Install prefix (what `HDF5_DIR` points at).
    pub install: PathBuf,
    /// Step logs.
    pub logs: PathBuf,
    /// Stamp recording the configure options of a complete build.
    pub stamp: PathBuf,
    /// v2 only: HDF5 1.14.5's API tests built against this HDF5 (`src/`, `bin/h5_api_test`,
    /// a `CTestTestfile.cmake` listing one test per area).
    pub api_test: PathBuf,
    /// v2 only: a Python venv with PyPI's `cmake` when the system's is older than HDF5 2.x needs.
    pub cmake_venv: PathBuf,
}

impl VariantDirs {
    /// The layout of `variant` under `cache_root`.
    pub fn new(cache_root: &Path, variant: Variant) -> Self {
        let root = cache_root.join(variant.dir_name());
        VariantDirs {
            download: root.join("download"),
            src: root.join("src"),
            build: root.join("build"),
            install: root.join("install"),
            logs: root.join("logs"),
            stamp: root.join("h5prov-build.stamp"),
            api_test: root.join(API_TEST_DIR),
            cmake_venv: root.join("cmake-venv"),
            root,
        }
    }
}

/// Name of the v2 variant's API test directory, a sibling of its build tree.
pub const API_TEST_DIR: &str = "api-test";

/// CMake configure arguments for `variant` (the command is `cmake <args>`).
pub fn configure_args(variant: Variant, dirs: &VariantDirs) -> Vec<String> {
    if variant.is_v2() {
        return configure_args_v2(dirs);
    }
    let on_off = |b: bool| if b { "ON" } else { "OFF" };
    let parallel = on_off(variant == Variant::Parallel);
    let threadsafe = variant == Variant::Threadsafe;
    let mut args = vec![
        "-S".to_string(),
        dirs.src.display().to_string(),
        "-B".to_string(),
        dirs.build.display().to_string(),
    ];
    args.extend([
        "-DCMAKE_BUILD_TYPE=Release".to_string(),
        format!("-DCMAKE_INSTALL_PREFIX={}", dirs.install.display()),
        "-DBUILD_SHARED_LIBS=ON".into(),
        "-DONLY_SHARED_LIBS=ON".into(),
        "-DBUILD_TESTING=ON".into(),
        "-DHDF5_TEST_API=ON".into(),
        "-DHDF5_TEST_PASSTHROUGH_VOL=ON".into(),
        "-DHDF5_BUILD_TOOLS=ON".into(),
        // HDF5 1.14 refuses thread-safety with the high-level library (a CMake error unless
        // ALLOW_UNSUPPORTED): the thread-safe variant builds without it.
        format!("-DHDF5_BUILD_HL_LIB={}", on_off(!threadsafe)),
        "-DHDF5_BUILD_FORTRAN=OFF".into(),
        "-DHDF5_BUILD_CPP_LIB=OFF".into(),
        "-DHDF5_BUILD_JAVA=OFF".into(),
        "-DHDF5_BUILD_EXAMPLES=OFF".into(),
        format!("-DHDF5_ENABLE_PARALLEL={parallel}"),
        "-DHDF5_ENABLE_Z_LIB_SUPPORT=ON".into(),
        "-DHDF5_ENABLE_SZIP_SUPPORT=OFF".into(),
    ]);
    if threadsafe {
        // One global API lock (recursive, pthreads), per-thread error stacks; ttsafe in
        // test/ runs its threads. Needs Fortran, C++ and HL off (all off above).
        args.push("-DHDF5_ENABLE_THREADSAFE=ON".to_string());
    }
    if variant == Variant::Parallel {
        // testpar/ and the parallel API tests (h5_api_test_parallel) under 4 ranks;
        // --oversubscribe lets ctest start 4 ranks on a 2-core machine.
        args.extend([
            "-DHDF5_TEST_PARALLEL=ON".to_string(),
            "-DMPIEXEC_MAX_NUMPROCS=4".into(),
            "-DMPIEXEC_PREFLAGS=--oversubscribe".into(),
        ]);
    }
    args
}

/// CMake configure arguments of HDF5 2.2.0: the shared C and high-level libraries with
/// zlib. The crate's source has no `test/`, `tools/`, examples, C++, Fortran or Java, so
/// those are off; deprecated symbols stay on (the default) because the 1.14.5 API tests are
/// compiled with `H5_USE_114_API`.
fn configure_args_v2(dirs: &VariantDirs) -> Vec<String> {
    vec![
        "-S".to_string(),
        dirs.src.display().to_string(),
        "-B".to_string(),
        dirs.build.display().to_string(),
        "-DCMAKE_BUILD_TYPE=Release".to_string(),
        format!("-DCMAKE_INSTALL_PREFIX={}", dirs.install.display()),
        "-DBUILD_SHARED_LIBS=ON".into(),
        "-DBUILD_STATIC_LIBS=OFF".into(),
        "-DHDF5_ONLY_SHARED_LIBS=ON".into(),
        "-DBUILD_TESTING=OFF".into(),
        "-DHDF5_BUILD_TOOLS=OFF".into(),
        "-DHDF5_BUILD_UTILS=OFF".into(),
        "-DHDF5_BUILD_HL_LIB=ON".into(),
        "-DHDF5_BUILD_FORTRAN=OFF".into(),
        "-DHDF5_BUILD_CPP_LIB=OFF".into(),
        "-DHDF5_BUILD_JAVA=OFF".into(),
        "-DHDF5_BUILD_EXAMPLES=OFF".into(),
        "-DHDF5_BUILD_DOC=OFF".into(),
        "-DHDF5_ENABLE_PARALLEL=OFF".into(),
        "-DHDF5_ENABLE_ZLIB_SUPPORT=ON".into(),
        "-DHDF5_ENABLE_SZIP_SUPPORT=OFF".into(),
        "-DHDF5_ENABLE_DEPRECATED_SYMBOLS=ON".into(),
        "-DHDF5_NO_PACKAGES=ON".into(),
    ]
}

/// Environment for the configure step (`CC=mpicc` for the parallel variant).
pub fn configure_env(variant: Variant) -> Vec<(String, String)> {
    match variant {
        Variant::Serial | Variant::Threadsafe | Variant::V2 => vec![],
        Variant::Parallel => vec![("CC".into(), "mpicc".into())],
    }
}

/// Debian packages the bootstrap needs for `variant`.
///
/// `build-essential` (C compiler, make) is listed explicitly: `cmake` does not depend on it
/// and `dpkg-dev` only recommends it. `libclang-dev` is for the workspace's bindgen.
///
/// v2: a C compiler, zlib, `patch` (for the API tests) and `python3-venv` (for PyPI's cmake).
/// CMake itself comes from PyPI when Debian's is too old.
pub fn required_packages(variant: Variant) -> Vec<&'static str> {
    if variant.is_v2() {
        return vec!["build-essential", "zlib1g-dev", "patch", "python3-venv"];
    }
    let mut p = vec![
        "build-essential",
        "cmake",
        "dpkg-dev",
        "zlib1g-dev",
        "libclang-dev",
    ];
    if variant == Variant::Parallel {
        p.extend(["libopenmpi-dev", "openmpi-bin"]);
    }
    p
}

/// The text of the stamp file for a complete build with these settings.
pub fn stamp_contents(variant: Variant, dirs: &VariantDirs) -> String {
    let source = if variant.is_v2() {
        format!(
            "crate={}={}",
            crate::hdf5v2::SOURCE_CRATE,
            crate::hdf5v2::SOURCE_CRATE_VERSION
        )
    } else {
        format!("hdf5={DEBIAN_SOURCE_VERSION}")
    };
    let mut s = format!(
        "# Written by hdf5-test-harness build-hdf5 after a complete build and install.\n\
         # The build is reused only while every line below is unchanged.\n\
         source={source}\nvariant={variant}\n"
    );
    for (k, v) in configure_env(variant) {
        s.push_str(&format!("env={k}={v}\n"));
    }
    for a in configure_args(variant, dirs) {
        s.push_str(&format!("configure={a}\n"));
    }
    s
}

/// The contents of the apt source file the bootstrap adds (a `deb-src` entry for trixie).
pub const APT_SOURCES_PATH: &str = "/etc/apt/sources.list.d/h5prov-trixie-src.sources";

/// The text of [`APT_SOURCES_PATH`].
pub const APT_SOURCES_TEXT: &str = "\
# Added by h5prov's hdf5-test-harness build-hdf5: source packages only (deb-src), used to
# fetch the HDF5 1.14 source with `apt-get source hdf5`. Binary packages are unaffected.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
";

/// The repository root: the parent of this crate's manifest directory when it still exists
/// (the usual case, `cargo run`), else `git rev-parse --show-toplevel` in the current directory.
pub fn repo_root() -> Result<PathBuf> {
    let compiled = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf);
    if let Some(root) =
        compiled.filter(|r| r.join("Cargo.toml").is_file() && r.join("hdf5-test-harness").is_dir())
    {
        return Ok(root);
    }
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .map_err(|e| Error::new(format!("finding the repository root: running git: {e}")))?;
    if !out.status.success() {
        return Err(Error::new(
            "finding the repository root: not inside a git checkout and the build-time path is gone; pass --repo DIR",
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn cache_root_precedence() {
        let all = env(&[
            ("H5PROV_CACHE", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_root(all).unwrap(), PathBuf::from("/c"));
        let xdg = env(&[
            ("H5PROV_CACHE", ""),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(cache_root(xdg).unwrap(), PathBuf::from("/x/h5prov"));
        let rel = env(&[("XDG_CACHE_HOME", "rel"), ("HOME", "/h")]);
        assert_eq!(cache_root(rel).unwrap(), PathBuf::from("/h/.cache/h5prov"));
        assert!(cache_root(env(&[])).is_err());
    }

    #[test]
    fn variant_layout_and_args() {
        let d = VariantDirs::new(Path::new("/c"), Variant::Serial);
        assert_eq!(d.install, PathBuf::from("/c/hdf5-1.14.5-serial/install"));
        let args = configure_args(Variant::Serial, &d);
        assert!(args.contains(&"-DHDF5_ENABLE_PARALLEL=OFF".to_string()));
        assert!(args.contains(&"-DCMAKE_INSTALL_PREFIX=/c/hdf5-1.14.5-serial/install".to_string()));
        assert!(args.contains(&"-DHDF5_TEST_PASSTHROUGH_VOL=ON".to_string()));
        let p = VariantDirs::new(Path::new("/c"), Variant::Parallel);
        assert_eq!(p.root, PathBuf::from("/c/hdf5-1.14.5-parallel"));
        assert!(configure_args(Variant::Parallel, &p)
            .contains(&"-DHDF5_ENABLE_PARALLEL=ON".to_string()));
        assert_eq!(
            configure_env(Variant::Parallel),
            [("CC".to_string(), "mpicc".to_string())]
        );
        assert!(required_packages(Variant::Parallel).contains(&"openmpi-bin"));
        // The stamp changes with the options.
        assert_ne!(
            stamp_contents(Variant::Serial, &d),
            stamp_contents(Variant::Parallel, &p)
        );
        assert!(stamp_contents(Variant::Serial, &d)
            .contains("configure=-DHDF5_ENABLE_SZIP_SUPPORT=OFF\n"));
    }

    #[test]
    fn v2_variant() {
        assert_eq!("v2".parse::<Variant>().unwrap(), Variant::V2);
        assert_eq!("hdf5-2".parse::<Variant>().unwrap(), Variant::V2);
        let err = "v3".parse::<Variant>().unwrap_err().to_string();
        assert!(err.contains("serial, parallel, threadsafe or v2"), "{err}");
        let d = VariantDirs::new(Path::new("/c"), Variant::V2);
        assert_eq!(d.root, PathBuf::from("/c/hdf5-2.2.0-serial"));
        assert_eq!(d.src, PathBuf::from("/c/hdf5-2.2.0-serial/src"));
        assert_eq!(d.install, PathBuf::from("/c/hdf5-2.2.0-serial/install"));
        assert_eq!(d.api_test, PathBuf::from("/c/hdf5-2.2.0-serial/api-test"));
        assert_eq!(Variant::V2.link_names(), ("hdf5-2", "hdf5-2-build"));
        assert_eq!(Variant::V2.default_plugin_dir(), ".deps/plugins");
        assert_eq!(Variant::V2.default_results_dir(), "target/harness-v2");
        let args = configure_args(Variant::V2, &d);
        for a in [
            "-DBUILD_TESTING=OFF",
            "-DHDF5_BUILD_TOOLS=OFF",
            "-DHDF5_ENABLE_ZLIB_SUPPORT=ON",
            "-DHDF5_ENABLE_DEPRECATED_SYMBOLS=ON",
            "-DCMAKE_INSTALL_PREFIX=/c/hdf5-2.2.0-serial/install",
        ] {
            assert!(args.contains(&a.to_string()), "{a} missing from {args:?}");
        }
        // HDF5 1.14's zlib option name does not exist in 2.x.
        assert!(!args.iter().any(|a| a.contains("Z_LIB")));
        let stamp = stamp_contents(Variant::V2, &d);
        assert!(
            stamp.contains("source=crate=hdf5-metno-src=0.10.4\nvariant=v2\n"),
            "{stamp}"
        );
        assert!(required_packages(Variant::V2).contains(&"python3-venv"));
        assert!(!required_packages(Variant::V2).contains(&"cmake"));
    }

    #[test]
    fn threadsafe_variant() {
        for name in ["threadsafe", "thread-safe", "ts"] {
            assert_eq!(name.parse::<Variant>().unwrap(), Variant::Threadsafe);
        }
        assert_eq!(Variant::Threadsafe.name(), "threadsafe");
        assert_eq!(Variant::Threadsafe.hdf5_version(), HDF5_VERSION);
        assert!(Variant::ALL.contains(&Variant::Threadsafe));
        let d = VariantDirs::new(Path::new("/c"), Variant::Threadsafe);
        assert_eq!(d.root, PathBuf::from("/c/hdf5-1.14.5-threadsafe"));
        assert_eq!(d.build, PathBuf::from("/c/hdf5-1.14.5-threadsafe/build"));
        assert_eq!(
            Variant::Threadsafe.link_names(),
            ("hdf5-threadsafe", "hdf5-threadsafe-build")
        );
        // The one libh5prov.so; results apart from the serial build's.
        assert_eq!(Variant::Threadsafe.default_plugin_dir(), ".deps/plugins");
        assert_eq!(
            Variant::Threadsafe.default_results_dir(),
            "target/harness-threadsafe"
        );
        assert!(Variant::Threadsafe.is_debian_source() && !Variant::V2.is_debian_source());
        let args = configure_args(Variant::Threadsafe, &d);
        for a in [
            "-DHDF5_ENABLE_THREADSAFE=ON",
            "-DHDF5_BUILD_HL_LIB=OFF",
            "-DHDF5_BUILD_CPP_LIB=OFF",
            "-DHDF5_BUILD_FORTRAN=OFF",
            "-DHDF5_ENABLE_PARALLEL=OFF",
            "-DBUILD_SHARED_LIBS=ON",
            "-DHDF5_TEST_API=ON",
            "-DHDF5_TEST_PASSTHROUGH_VOL=ON",
            "-DHDF5_BUILD_TOOLS=ON",
            "-DCMAKE_INSTALL_PREFIX=/c/hdf5-1.14.5-threadsafe/install",
        ] {
            assert!(args.contains(&a.to_string()), "{a} missing from {args:?}");
        }
        // Supported configuration only: no ALLOW_UNSUPPORTED.
        assert!(!args.iter().any(|a| a.contains("ALLOW_UNSUPPORTED")));
        // The other variants are not thread-safe and keep the high-level library.
        let s = VariantDirs::new(Path::new("/c"), Variant::Serial);
        let serial = configure_args(Variant::Serial, &s);
        assert!(!serial.iter().any(|a| a.contains("THREADSAFE")));
        assert!(serial.contains(&"-DHDF5_BUILD_HL_LIB=ON".to_string()));
        assert!(configure_env(Variant::Threadsafe).is_empty());
        assert_eq!(
            required_packages(Variant::Threadsafe),
            required_packages(Variant::Serial)
        );
        let stamp = stamp_contents(Variant::Threadsafe, &d);
        assert!(
            stamp.contains("source=hdf5=1.14.5+repack-3\nvariant=threadsafe\n"),
            "{stamp}"
        );
        assert_ne!(stamp, stamp_contents(Variant::Serial, &s));
    }
}
