//! HDF5 2.x, the `v2` variant: where its source comes from, the CMake it needs, and how
//! HDF5 1.14.5's API tests (`test/API`) are built against it.
//!
//! - **Source.** No Debian 12 or trixie source package has HDF5 2.x, and sid's returns 404.
//!   The crates.io crate [`SOURCE_CRATE`] [`SOURCE_CRATE_VERSION`] vendors the HDF5 2.2.0
//!   library source in [`SOURCE_CRATE_SUBDIR`] (`src/`, `hl/`, `utils/`, the CMake files;
//!   no `test/`, `testpar/` or `tools/`). `cargo vendor` on a throwaway manifest
//!   ([`fetch_manifest`]) fetches and checksums it with nothing but cargo.
//! - **CMake.** HDF5 2.x needs CMake >= 3.26 ([`CMAKE_MINIMUM`]); Debian 12 has 3.25.
//!   PyPI's `cmake` ([`CMAKE_PIP_REQUIREMENT`]) goes into a venv in the cache.
//! - **Tests.** Only the API suite: 1.14.5's `test/API` sources (from the serial variant's
//!   Debian source package) with [`API_TEST_PATCH`], compiled with `-DH5_USE_114_API`
//!   against the 2.2.0 build tree, plus [`API_TEST_GLOBALS`] instead of libh5test. A
//!   hand-written `CTestTestfile.cmake` ([`ctest_file`]) lists one `h5_api_test_<area>`
//!   test per area, as 1.14.5's `test/API/CMakeLists.txt` does, so `run` finds the areas
//!   with `ctest --show-only` exactly as for 1.14.5. The `vol` and `tools` suites need
//!   HDF5's `test/` and `tools/` programs, which no registry has for 2.x
//!   ([`missing_suite_reason`]).

use crate::error::{Error, Result};
use std::path::Path;

/// The crates.io crate that vendors the HDF5 2.2.0 source.
pub const SOURCE_CRATE: &str = "hdf5-metno-src";
/// Its version (exact: another version may vendor another HDF5).
pub const SOURCE_CRATE_VERSION: &str = "0.10.4";
/// Where in the crate the HDF5 source tree is.
pub const SOURCE_CRATE_SUBDIR: &str = "ext/hdf5";
/// The oldest CMake HDF5 2.x configures with (`cmake_minimum_required` in its CMakeLists.txt).
pub const CMAKE_MINIMUM: (u32, u32) = (3, 26);
/// What `pip install` asks PyPI for when the system's CMake is older than [`CMAKE_MINIMUM`].
pub const CMAKE_PIP_REQUIREMENT: &str = "cmake>=3.26,<4.2";

/// The changes 1.14.5's API tests need to build and run against HDF5 2.2.0; each is
/// explained at the top of the file.
pub const API_TEST_PATCH: &str = include_str!("../patches/api-test-1.14.5-on-hdf5-2.patch");
/// File name of [`API_TEST_PATCH`] next to the patched sources.
pub const API_TEST_PATCH_NAME: &str = "api-test-1.14.5-on-hdf5-2.patch";
/// The five globals the API tests use from HDF5's test library.
pub const API_TEST_GLOBALS: &str = include_str!("../c/api_test_globals.c");
/// File name of [`API_TEST_GLOBALS`] among the API test sources.
pub const API_TEST_GLOBALS_NAME: &str = "h5prov_api_test_globals.c";
/// Preprocessor flags of the API test build: the 1.14 signatures of versioned functions
/// (`H5_USE_114_API`), and the definitions HDF5 2.2.0's CMake compiles its own library
/// and tests with (the internal headers the tests include depend on them).
pub const API_TEST_DEFINES: &[&str] = &[
    "-DH5_USE_114_API",
    "-DH5_BUILT_AS_DYNAMIC_LIB",
    "-D_FILE_OFFSET_BITS=64",
    "-D_GNU_SOURCE",
    "-D_LARGEFILE_SOURCE",
    "-D_POSIX_C_SOURCE=200809L",
];
/// The files taken from 1.14.5's `test/` besides `test/API/`: the test macros.
pub const API_TEST_EXTRA_HEADERS: &[&str] = &["h5test.h"];

/// `Cargo.toml` of the throwaway package whose `cargo vendor` fetches the source crate.
/// Its own `[workspace]` keeps cargo from looking for a workspace above the cache.
pub fn fetch_manifest() -> String {
    format!(
        "# Written by hdf5-test-harness build-hdf5 --variant v2: `cargo vendor` on this package\n\
         # fetches (and checksums) the crate that vendors the HDF5 2.2.0 source.\n\
         [package]\n\
         name = \"h5prov-fetch-hdf5-source\"\n\
         version = \"0.0.0\"\n\
         edition = \"2021\"\n\
         publish = false\n\n\
         [lib]\n\
         path = \"lib.rs\"\n\n\
         [dependencies]\n\
         {SOURCE_CRATE} = {{ version = \"={SOURCE_CRATE_VERSION}\", default-features = false }}\n\n\
         [workspace]\n"
    )
}

/// The directory `cargo vendor --versioned-dirs` puts the source crate in.
pub fn vendored_crate_dir() -> String {
    format!("{SOURCE_CRATE}-{SOURCE_CRATE_VERSION}")
}

/// Parses `cmake version 3.25.1` (the first line of `cmake --version`).
pub fn parse_cmake_version(text: &str) -> Option<(u32, u32, u32)> {
    let rest = text.lines().next()?.trim().strip_prefix("cmake version ")?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((major, minor, patch))
}

/// True when a CMake of version `v` can configure HDF5 2.x.
pub fn cmake_new_enough(v: (u32, u32, u32)) -> bool {
    (v.0, v.1) >= CMAKE_MINIMUM
}

/// The API test areas of 1.14.5's `test/API/CMakeLists.txt`: the words of
/// `set (HDF5_API_TESTS ...)` (the first such `set`; the `async` area is added only with
/// `HDF5_TEST_API_ENABLE_ASYNC`, which needs an async connector).
pub fn api_areas_from_cmakelists(text: &str) -> Result<Vec<String>> {
    let start = text
        .find("set (HDF5_API_TESTS\n")
        .or_else(|| text.find("set(HDF5_API_TESTS\n"))
        .ok_or_else(|| Error::new("no `set (HDF5_API_TESTS` list in test/API/CMakeLists.txt"))?;
    let body = &text[start..];
    let body = &body[body.find('\n').unwrap_or(0)..];
    let end = body.find(')').ok_or_else(|| {
        Error::new("unterminated `set (HDF5_API_TESTS` in test/API/CMakeLists.txt")
    })?;
    let areas: Vec<String> = body[..end]
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    if areas.is_empty()
        || !areas
            .iter()
            .all(|a| a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(Error::new(format!(
            "unexpected HDF5_API_TESTS list in test/API/CMakeLists.txt: {areas:?}"
        )));
    }
    Ok(areas)
}

/// The C sources of `h5_api_test` (file names in the API test source directory), as in
/// 1.14.5's `test/API/CMakeLists.txt`, plus [`API_TEST_GLOBALS_NAME`].
pub fn api_test_sources(areas: &[String]) -> Vec<String> {
    let mut files: Vec<String> = areas.iter().map(|a| format!("H5_api_{a}_test.c")).collect();
    files.extend([
        "H5_api_test.c".to_string(),
        "H5_api_test_util.c".to_string(),
        API_TEST_GLOBALS_NAME.to_string(),
    ]);
    files
}

/// Compiler arguments that build `exe` from the API test sources in `api_src` against the
/// HDF5 source tree `hdf5_src` and its build tree `build`: internal headers from `src/`
/// (the tests include `H5private.h`), `H5pubconf.h` from `<build>/src`, and `libhdf5.so`
/// from `<build>/bin` with an rpath, as HDF5's own test programs link it.
pub fn api_test_compile_args(
    api_src: &Path,
    hdf5_src: &Path,
    build: &Path,
    exe: &Path,
    areas: &[String],
) -> Vec<String> {
    let lib = build.join("bin");
    let mut args = vec!["-O2".to_string(), "-std=gnu11".to_string()];
    args.extend(API_TEST_DEFINES.iter().map(|d| d.to_string()));
    for inc in [
        api_src.to_path_buf(),
        hdf5_src.join("src"),
        hdf5_src.join("src/H5FDsubfiling"),
        build.join("src"),
    ] {
        args.push(format!("-I{}", inc.display()));
    }
    args.push("-o".into());
    args.push(exe.display().to_string());
    args.extend(
        api_test_sources(areas)
            .iter()
            .map(|f| api_src.join(f).display().to_string()),
    );
    args.extend([
        format!("-L{}", lib.display()),
        "-lhdf5".to_string(),
        format!("-Wl,-rpath,{}", lib.display()),
    ]);
    args
}

/// What CMake's `configure_file` makes of `H5_api_test_config.h.in` when none of its
/// variables is set (serial HDF5, no async tests): every `#cmakedefine NAME ...` becomes
/// `/* #undef NAME */`, everything else is kept.
pub fn configure_header(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    for line in template.lines() {
        match line.trim_start().strip_prefix("#cmakedefine ") {
            Some(rest) => {
                let name = rest.split_whitespace().next().unwrap_or("");
                out.push_str(&format!("/* #undef {name} */"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn cmake_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A `CTestTestfile.cmake` with one test `h5_api_test_<area>` running `<exe> <area>` per
/// area, each depending on the one before, as 1.14.5's `test/API/CMakeLists.txt` adds them.
pub fn ctest_file(exe: &Path, areas: &[String], timeout_secs: f64) -> String {
    let mut s = String::from(
        "# Written by hdf5-test-harness build-hdf5 --variant v2: HDF5 1.14.5's API tests\n\
         # (test/API) built against HDF5 2.2.0, one test per area as in its CMakeLists.txt.\n",
    );
    let exe = cmake_quote(&exe.display().to_string());
    let mut last: Option<String> = None;
    for area in areas {
        let name = format!("h5_api_test_{area}");
        s.push_str(&format!("add_test({name} {exe} {})\n", cmake_quote(area)));
        let mut props = format!("TIMEOUT \"{timeout_secs}\"");
        if let Some(prev) = &last {
            props.push_str(&format!(" DEPENDS {}", cmake_quote(prev)));
        }
        s.push_str(&format!(
            "set_tests_properties({name} PROPERTIES {props})\n"
        ));
        last = Some(name);
    }
    s
}

/// Name of the stamp file in the API test directory.
pub const API_TEST_STAMP_NAME: &str = "h5prov-api-test.stamp";

/// The text of the API test stamp: what `h5_api_test` was built from and with. `library`
/// is the HDF5 build's own stamp text, `compiler` its `CMAKE_C_COMPILER`.
pub fn api_test_stamp(library: &str, compiler: &str) -> String {
    format!(
        "# Written by hdf5-test-harness build-hdf5 --variant v2 after building h5_api_test.\n\
         # It is rebuilt when a line below changes.\n\
         tests=hdf5={} test/API\npatch={}\nglobals={}\nlibrary={}\ncompiler={compiler}\nflags={}\n",
        crate::paths::DEBIAN_SOURCE_VERSION,
        fingerprint(&[API_TEST_PATCH]),
        fingerprint(&[API_TEST_GLOBALS]),
        fingerprint(&[library]),
        API_TEST_DEFINES.join(" ")
    )
}

/// A short stable fingerprint (64-bit FNV-1a, hex) of some texts, for stamp files.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Why `suite` cannot run on an HDF5 2.x build tree, or `None` when it can.
pub fn missing_suite_reason(suite: crate::results::Suite) -> Option<String> {
    use crate::results::Suite;
    let what = match suite {
        Suite::Api => return None,
        Suite::Vol => "HDF5's test/ programs (run through the pass-through-VOL ctest list)",
        Suite::Tools => "HDF5's tools/ (h5dump, h5ls, h5diff, h5repack, ... and their tests)",
        Suite::Testpar => "a parallel HDF5 and its testpar/ programs",
    };
    Some(format!(
        "suite '{suite}' cannot run on HDF5 2.x: it needs {what}, and the only HDF5 2.x source \
         available from the package registries (crates.io {SOURCE_CRATE} {SOURCE_CRATE_VERSION}, \
         HDF5 2.2.0) has the library but no test/, testpar/ or tools/ directories. On the v2 \
         variant only --suite api runs (HDF5 1.14.5's test/API built against 2.2.0)."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Suite;

    #[test]
    fn manifest_pins_the_crate() {
        let m = fetch_manifest();
        assert!(
            m.contains("hdf5-metno-src = { version = \"=0.10.4\""),
            "{m}"
        );
        assert!(m.contains("\n[workspace]\n"), "{m}");
        assert_eq!(vendored_crate_dir(), "hdf5-metno-src-0.10.4");
    }

    #[test]
    fn cmake_versions() {
        assert_eq!(
            parse_cmake_version("cmake version 3.25.1\n\nCMake suite maintained"),
            Some((3, 25, 1))
        );
        assert_eq!(parse_cmake_version("cmake version 4.1.3"), Some((4, 1, 3)));
        assert_eq!(
            parse_cmake_version("cmake version 3.31.0-rc2"),
            Some((3, 31, 0))
        );
        assert_eq!(parse_cmake_version("ctest version 3.25.1"), None);
        assert!(!cmake_new_enough((3, 25, 1)));
        assert!(cmake_new_enough((3, 26, 0)));
        assert!(cmake_new_enough((4, 0, 0)));
    }

    const CMAKELISTS: &str = "\
if (HDF5_TEST_API_ENABLE_DRIVER)
  add_subdirectory (driver)
endif ()

set (HDF5_API_TESTS
    attribute
    dataset
    file # a comment
    misc
)

if (HDF5_TEST_API_ENABLE_ASYNC)
  set (HDF5_API_TESTS
      ${HDF5_API_TESTS}
      async
  )
endif ()
";

    #[test]
    fn areas_from_the_cmake_list() {
        assert_eq!(
            api_areas_from_cmakelists(CMAKELISTS).unwrap(),
            ["attribute", "dataset", "file", "misc"]
        );
        assert!(api_areas_from_cmakelists("project (x)\n").is_err());
        let areas = ["file".to_string(), "misc".to_string()];
        assert_eq!(
            api_test_sources(&areas),
            [
                "H5_api_file_test.c",
                "H5_api_misc_test.c",
                "H5_api_test.c",
                "H5_api_test_util.c",
                API_TEST_GLOBALS_NAME
            ]
        );
    }

    #[test]
    fn compile_line() {
        let areas = ["file".to_string()];
        let a = api_test_compile_args(
            Path::new("/a/src"),
            Path::new("/h"),
            Path::new("/b"),
            Path::new("/a/bin/h5_api_test"),
            &areas,
        );
        let line = a.join(" ");
        assert!(
            line.starts_with("-O2 -std=gnu11 -DH5_USE_114_API "),
            "{line}"
        );
        assert!(
            line.contains(" -I/a/src -I/h/src -I/h/src/H5FDsubfiling -I/b/src -o /a/bin/h5_api_test /a/src/H5_api_file_test.c "),
            "{line}"
        );
        assert!(
            line.ends_with(" -L/b/bin -lhdf5 -Wl,-rpath,/b/bin"),
            "{line}"
        );
    }

    #[test]
    fn config_header_like_configure_file() {
        let t = "#ifndef X\n#cmakedefine H5_API_TEST_HAVE_ASYNC\n  #cmakedefine MPIEXEC \"@MPIEXEC@\" /* c */\n#define Y 1\n";
        assert_eq!(
            configure_header(t),
            "#ifndef X\n/* #undef H5_API_TEST_HAVE_ASYNC */\n/* #undef MPIEXEC */\n#define Y 1\n"
        );
    }

    #[test]
    fn ctest_file_lists_areas_in_order() {
        let areas = ["file".to_string(), "group".to_string()];
        let text = ctest_file(Path::new("/c/api-test/bin/h5_api_test"), &areas, 1200.0);
        assert!(text.contains(
            "add_test(h5_api_test_file \"/c/api-test/bin/h5_api_test\" \"file\")\n\
             set_tests_properties(h5_api_test_file PROPERTIES TIMEOUT \"1200\")\n"
        ));
        assert!(text.contains(
            "set_tests_properties(h5_api_test_group PROPERTIES TIMEOUT \"1200\" DEPENDS \"h5_api_test_file\")\n"
        ));
    }

    #[test]
    fn api_stamp_follows_its_inputs() {
        let a = api_test_stamp("lib A", "/usr/bin/cc");
        assert!(a.contains("tests=hdf5=1.14.5+repack-3 test/API\n"), "{a}");
        assert!(a.contains("compiler=/usr/bin/cc\n"), "{a}");
        assert_ne!(a, api_test_stamp("lib B", "/usr/bin/cc"));
        assert_ne!(a, api_test_stamp("lib A", "/usr/bin/clang"));
    }

    #[test]
    fn fingerprints_are_stable_and_separate_parts() {
        assert_eq!(fingerprint(&["a"]), fingerprint(&["a"]));
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
        assert_eq!(fingerprint(&[]).len(), 16);
    }

    #[test]
    fn the_patch_and_globals_are_embedded() {
        assert!(API_TEST_PATCH.contains("+++ b/H5_api_test.c"));
        assert!(API_TEST_PATCH.contains("H5VLcmp_connector_cls"));
        assert!(API_TEST_GLOBALS.contains("vol_cap_flags_g"));
    }

    #[test]
    fn only_api_runs_on_2x() {
        assert_eq!(missing_suite_reason(Suite::Api), None);
        for s in [Suite::Vol, Suite::Tools, Suite::Testpar] {
            let why = missing_suite_reason(s).unwrap();
            assert!(why.contains("--suite api"), "{why}");
            assert!(why.contains(s.name()), "{why}");
        }
    }
}
