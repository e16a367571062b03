//! h5prov's HDF5 regression harness.
//!
//! - [`bootstrap`]: `build-hdf5`, HDF5 1.14 from `HDF5_DIR` or from Debian's source package,
//!   built into a cache (serial, parallel or thread-safe) and linked into `<repo>/.deps`;
//!   with `--variant v2`, HDF5 2.2.0 from
//!   crates.io and HDF5 1.14.5's API tests built against it ([`hdf5v2`]).
//! - [`asyncvol`]: `build-async`, Argobots and HDF5's async I/O connector vol-async (with
//!   its serial tests) from the vendored release sources, against the thread-safe HDF5, cached.
//! - [`runner`]: `run`/`diff`, HDF5's API, pass-through-VOL and tools suites per connector
//!   mode, each diffed against native, with a probe proving that the connector was loaded.
//!
//! The parsing and comparison logic is pure and unit-tested: [`apitest`] (API test output),
//! [`ctest`] (ctest's JSON list and progress lines), [`expected`] (the expected-differences
//! file), [`h5version`] (`H5public.h`), [`diff`] (native versus mode), [`suites`], [`mode`],
//! [`paths`], [`shellenv`], [`testpar`], [`traces`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod error;

pub mod apitest;
pub mod asyncvol;
pub mod bootstrap;
pub mod buildtree;
pub mod ctest;
pub mod diff;
pub mod expected;
pub mod h5version;
pub mod hdf5v2;
pub mod mode;
pub mod mpirun;
pub mod paths;
pub mod probe;
pub mod process;
pub mod results;
pub mod runner;
pub mod shellenv;
pub mod suites;
pub mod testpar;
pub mod traces;
