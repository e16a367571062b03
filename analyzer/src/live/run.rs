//! `h5prov run`: the environment that loads h5prov into an unmodified HDF5 program.
//!
//! Pure functions, so that every decision is unit-tested: where the plugin that ships with
//! this `h5prov` is ([`find_plugin`]), the `HDF5_PLUGIN_PATH` that puts it first
//! ([`plugin_path`]) and the `HDF5_VOL_CONNECTOR` value built from the flags, with a
//! connector the user already selected stacked under h5prov ([`vol_connector`]). The binary
//! starts the command with them.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The plugin's file name.
pub const PLUGIN: &str = "libh5prov.so";

/// The environment variable that names the plugin to use (the file, or the directory
/// holding it), before any other place is searched.
pub const PLUGIN_ENV: &str = "H5PROV_PLUGIN";

/// Where the plugin that ships with the `h5prov` executable `exe` is, in search order:
///
/// 1. `$H5PROV_PLUGIN` (`env`): a `libh5prov.so` file, or a directory holding one; when it
///    is set, nothing else is searched (a wrong value is an error, never a silent fallback);
/// 2. the executable's own directory: a cargo build (`target/<profile>/` holds both
///    `h5prov` and `libh5prov.so`);
/// 3. the Python package of the wheel: `pip install h5prov` puts the executable in the
///    environment's `bin/` and the plugin in
///    `lib/python3.X/site-packages/h5prov/plugin/` of the same prefix (a venv, `--user`'s
///    `~/.local`, `/usr/local` with Debian's `dist-packages`).
///
/// Returns the directory to put into `HDF5_PLUGIN_PATH`, or an error that lists what was
/// searched.
pub fn find_plugin(exe: &Path, env: Option<&OsStr>) -> Result<PathBuf, String> {
    if let Some(v) = env.filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v);
        if p.is_dir() && p.join(PLUGIN).is_file() {
            return Ok(p);
        }
        if p.is_file() && p.file_name() == Some(OsStr::new(PLUGIN)) {
            return Ok(p.parent().unwrap_or(Path::new(".")).to_path_buf());
        }
        return Err(format!(
            "${PLUGIN_ENV}={}: not {PLUGIN} nor a directory holding it (HDF5 loads the \
             connector by that file name)",
            p.display()
        ));
    }
    let mut searched = Vec::new();
    if let Some(dir) = exe.parent() {
        searched.push(dir.join(PLUGIN));
        if dir.join(PLUGIN).is_file() {
            return Ok(dir.to_path_buf());
        }
        if let Some(prefix) = dir.parent() {
            let lib = prefix.join("lib");
            let mut pythons: Vec<PathBuf> = std::fs::read_dir(&lib)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("python3"))
                })
                .collect();
            pythons.sort();
            for py in pythons {
                for pkgs in ["site-packages", "dist-packages"] {
                    let d = py.join(pkgs).join("h5prov").join("plugin");
                    if d.join(PLUGIN).is_file() {
                        return Ok(d);
                    }
                }
            }
            searched.push(
                lib.join("python3*/site-packages/h5prov/plugin")
                    .join(PLUGIN),
            );
        }
    }
    Err(format!(
        "cannot find {PLUGIN}: searched {}; build it (cargo build --release -p h5prov), \
         install the wheel (pip install h5prov), or set ${PLUGIN_ENV} to it",
        searched
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// `HDF5_PLUGIN_PATH` with `dir` first and the user's directories (`current`) after it, so
/// their filter plugins and connectors are still found.
pub fn plugin_path(dir: &Path, current: Option<&OsStr>) -> OsString {
    let mut v = dir.as_os_str().to_os_string();
    if let Some(c) = current.filter(|c| !c.is_empty()) {
        v.push(":");
        v.push(c);
    }
    v
}

/// h5prov's options from `h5prov run`'s flags.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `path=`: the trace directory, absolute (every process of the job, whatever its
    /// working directory, writes there).
    pub path: PathBuf,
    /// `level=`.
    pub level: Option<String>,
    /// `format=`.
    pub format: Option<String>,
    /// `stream=`.
    pub stream: Option<String>,
    /// More `key=value` options, as given.
    pub extra: Vec<String>,
}

/// Checks an option value for the characters the connector string reserves.
fn plain(flag: &str, v: &str) -> Result<(), String> {
    if v.contains([';', '{', '}']) || v.trim() != v || v.is_empty() {
        return Err(format!(
            "{flag} {v:?}: must be non-empty, without ';', '{{', '}}' or surrounding spaces \
             (they separate the connector string's items)"
        ));
    }
    Ok(())
}

/// The `HDF5_VOL_CONNECTOR` value that loads h5prov with `o`, over the connector the user's
/// `current` value selects:
///
/// - unset or empty: native underneath (`under_vol=0;under_info={}`);
/// - `native [info]`: the same;
/// - `pass_through [INFO]` or `async [INFO]` ([`KNOWN`]): stacked under h5prov by value,
///   `under_vol=1` or `under_vol=512`, with `under_info={INFO}`;
/// - `NAME [INFO]` of another connector: stacked under h5prov by name,
///   `under_vol_name=NAME;under_info={INFO}` (h5prov has HDF5 load it by name, from
///   `HDF5_PLUGIN_PATH`, which keeps the user's directories);
/// - a value naming h5prov already, one that is not UTF-8, or an `INFO` with unbalanced
///   braces: an error that says so. A user's connector is never silently replaced.
///
/// HDF5 reads the variable as a connector name, then whitespace, then that connector's info
/// string; `path=` comes last (h5prov takes any bytes there but `;`).
pub fn vol_connector(o: &RunOptions, current: Option<&OsStr>) -> Result<String, String> {
    let under = match current {
        None => "under_vol=0;under_info={}".to_string(),
        Some(c) => {
            let c = c.to_str().ok_or_else(|| {
                format!(
                    "HDF5_VOL_CONNECTOR={}: not UTF-8; unset it to trace with h5prov over the \
                     native connector",
                    c.to_string_lossy()
                )
            })?;
            let c = c.trim();
            let (name, info) = match c.find(char::is_whitespace) {
                Some(i) => (&c[..i], c[i..].trim()),
                None => (c, ""),
            };
            if name.is_empty() || name == "native" {
                "under_vol=0;under_info={}".to_string()
            } else if let Some((_, value)) = KNOWN.iter().find(|(n, _)| *n == name) {
                if !balanced(info) {
                    return Err(unbalanced(c, name));
                }
                format!("under_vol={value};under_info={{{info}}}")
            } else if name == "h5prov" {
                return Err(format!(
                    "HDF5_VOL_CONNECTOR={c:?} already selects h5prov: unset it to let \
                     `h5prov run` set it from its flags, or run the command without \
                     `h5prov run` (HDF5_PLUGIN_PATH must then hold {PLUGIN})"
                ));
            } else if name.contains(['{', '}', ';', '=']) {
                return Err(format!(
                    "HDF5_VOL_CONNECTOR={c:?}: {name:?} is not a connector name; unset it, \
                     or set it to `NAME [INFO]` of the connector to stack under h5prov"
                ));
            } else if !balanced(info) {
                return Err(unbalanced(c, name));
            } else {
                format!("under_vol_name={name};under_info={{{info}}}")
            }
        }
    };
    let mut s = format!("h5prov {under}");
    for (flag, key, v) in [
        ("--level", "level", &o.level),
        ("--format", "format", &o.format),
        ("--stream", "stream", &o.stream),
    ] {
        if let Some(v) = v {
            plain(flag, v)?;
            s += &format!(";{key}={v}");
        }
    }
    for kv in &o.extra {
        plain("--option", kv)?;
        let Some((k, _)) = kv.split_once('=') else {
            return Err(format!(
                "--option {kv:?}: expected KEY=VALUE (e.g. max_size=512M)"
            ));
        };
        if ["path", "under_vol", "under_vol_name", "under_info"].contains(&k.trim()) {
            return Err(format!(
                "--option {kv:?}: {k} is set by `h5prov run` itself{}",
                if k == "path" { " (use --path)" } else { "" }
            ));
        }
        s += &format!(";{kv}");
    }
    let path = o.path.to_str().ok_or_else(|| {
        format!(
            "--path {}: not UTF-8 (HDF5_VOL_CONNECTOR is built as text here)",
            o.path.display()
        )
    })?;
    if path.contains(';') {
        return Err(format!(
            "--path {path}: contains ';', which separates the connector string's items"
        ));
    }
    s += &format!(";path={path}");
    Ok(s)
}

/// Connectors stacked under h5prov by value rather than by name: HDF5's `pass_through`
/// is built into the library and is not found by name from inside another connector's
/// info (h5prov's `under_vol_name=pass_through` fails to register it; measured with HDF5
/// 1.14.5), and vol-async's registered value is the one its documentation and
/// docs/ASYNC.md use.
pub const KNOWN: &[(&str, u32)] = &[("pass_through", 1), ("async", 512)];

fn unbalanced(c: &str, name: &str) -> String {
    format!(
        "HDF5_VOL_CONNECTOR={c:?}: the info string of {name} has unbalanced braces, so it \
         cannot be stacked under h5prov (under_info={{...}})"
    )
}

/// Whether the braces of `s` nest properly.
fn balanced(s: &str) -> bool {
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

/// The exit status `h5prov run` returns for a command's status: its code, or 128 + the
/// signal that ended it (as shells report it).
pub fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => (c & 0xff) as u8,
        (None, Some(sig)) => (128 + sig).clamp(0, 255) as u8,
        (None, None) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> RunOptions {
        RunOptions {
            path: "/t/traces".into(),
            ..Default::default()
        }
    }

    #[test]
    fn native_underneath_by_default() {
        assert_eq!(
            vol_connector(&opts(), None).unwrap(),
            "h5prov under_vol=0;under_info={};path=/t/traces"
        );
        for c in ["", "native", "  native  "] {
            assert_eq!(
                vol_connector(&opts(), Some(OsStr::new(c))).unwrap(),
                "h5prov under_vol=0;under_info={};path=/t/traces"
            );
        }
    }

    #[test]
    fn flags_become_options() {
        let o = RunOptions {
            level: Some("element".into()),
            format: Some("csv".into()),
            stream: Some("host:9099".into()),
            extra: vec!["max_size=512M".into()],
            ..opts()
        };
        assert_eq!(
            vol_connector(&o, None).unwrap(),
            "h5prov under_vol=0;under_info={};level=element;format=csv;stream=host:9099;\
             max_size=512M;path=/t/traces"
        );
    }

    #[test]
    fn another_connector_is_stacked_under_by_name() {
        let c = OsStr::new("pass_through under_vol=0;under_info={}");
        assert_eq!(
            vol_connector(&opts(), Some(c)).unwrap(),
            "h5prov under_vol=1;under_info={under_vol=0;under_info={}};path=/t/traces"
        );
        assert_eq!(
            vol_connector(&opts(), Some(OsStr::new("async under_vol=0;under_info={}"))).unwrap(),
            "h5prov under_vol=512;under_info={under_vol=0;under_info={}};path=/t/traces"
        );
        assert_eq!(
            vol_connector(&opts(), Some(OsStr::new("my_vol  a=1 "))).unwrap(),
            "h5prov under_vol_name=my_vol;under_info={a=1};path=/t/traces"
        );
    }

    #[test]
    fn refusals_name_the_problem() {
        let e = vol_connector(&opts(), Some(OsStr::new("h5prov path=x"))).unwrap_err();
        assert!(e.contains("already selects h5prov"), "{e}");
        let e = vol_connector(&opts(), Some(OsStr::new("pt under_info={"))).unwrap_err();
        assert!(e.contains("unbalanced"), "{e}");
        let o = RunOptions {
            level: Some("a;b".into()),
            ..opts()
        };
        assert!(vol_connector(&o, None).unwrap_err().contains("--level"));
        let o = RunOptions {
            extra: vec!["path=/x".into()],
            ..opts()
        };
        assert!(vol_connector(&o, None).unwrap_err().contains("use --path"));
        let o = RunOptions {
            path: "/a;b".into(),
            ..Default::default()
        };
        assert!(vol_connector(&o, None).unwrap_err().contains("--path"));
    }

    #[test]
    fn plugin_path_keeps_the_users_directories() {
        let d = Path::new("/p");
        assert_eq!(plugin_path(d, None), "/p");
        assert_eq!(plugin_path(d, Some(OsStr::new(""))), "/p");
        assert_eq!(plugin_path(d, Some(OsStr::new("/a:/b"))), "/p:/a:/b");
    }

    #[test]
    fn plugin_search_order() {
        let root = std::env::temp_dir().join(format!("h5prov-run-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // A wheel in a venv: bin/h5prov, lib/python3.11/site-packages/h5prov/plugin/.
        let bin = root.join("venv/bin");
        let pkg = root.join("venv/lib/python3.11/site-packages/h5prov/plugin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join(PLUGIN), b"").unwrap();
        let exe = bin.join("h5prov");
        assert_eq!(find_plugin(&exe, None).unwrap(), pkg);
        // Next to the executable wins over the package.
        std::fs::write(bin.join(PLUGIN), b"").unwrap();
        assert_eq!(find_plugin(&exe, None).unwrap(), bin);
        // The override wins over both, as a file or a directory; a wrong one is an error.
        let other = root.join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join(PLUGIN), b"").unwrap();
        assert_eq!(find_plugin(&exe, Some(other.as_os_str())).unwrap(), other);
        let f = other.join(PLUGIN);
        assert_eq!(find_plugin(&exe, Some(f.as_os_str())).unwrap(), other);
        let e = find_plugin(&exe, Some(root.as_os_str())).unwrap_err();
        assert!(e.contains(PLUGIN_ENV), "{e}");
        // Nothing anywhere: the error lists the places searched.
        let lone = root.join("lone/bin/h5prov");
        std::fs::create_dir_all(lone.parent().unwrap()).unwrap();
        let e = find_plugin(&lone, None).unwrap_err();
        assert!(e.contains("lone/bin/libh5prov.so"), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
