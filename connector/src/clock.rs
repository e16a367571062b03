//! The span clock: a raw tick read at the four points of every traced callback, converted
//! to nanoseconds only when a record is made.
//!
//! Where the kernel keeps `CLOCK_MONOTONIC` with the CPU's time-stamp counter (the
//! `current_clocksource` is `tsc`: the kernel found it invariant and synchronised across
//! CPUs), a tick is a `RDTSC` reading: about 9 ns, against about 23 ns for
//! `clock_gettime` through the vDSO (measured on the 2-core development VM), and a traced
//! callback reads the clock five times. Elsewhere a tick is `CLOCK_MONOTONIC` in ns.
//!
//! Ticks become `CLOCK_MONOTONIC` nanoseconds through a calibration (an anchor pair of
//! readings and a rate). The rate is measured over 0.25 ms at start (and the TSC is not used
//! when the kernel clock does not advance with it, as under `faketime`), then again over an
//! ever longer baseline (10 ms, 20 ms, ... up to every second), each time re-anchoring on a
//! fresh `clock_gettime`: the error of a converted time stays below a microsecond, and
//! durations are exact to the rate's error (better than 10⁻⁴ at start, 10⁻⁷ after a
//! second). The calibration is published with a sequence lock: readers never block.

use crate::ffi::sys;
use parking_lot::Mutex;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::LazyLock;

/// A raw clock reading.
pub type Tick = u64;

/// Whether the kernel keeps time with the TSC (and the user did not ask for the plain
/// clock with `H5PROV_CLOCK=monotonic`).
fn kernel_uses_tsc() -> bool {
    sys::tsc().is_some()
        && std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .is_ok_and(|s| s.trim() == "tsc")
        && std::env::var_os("H5PROV_CLOCK").is_none_or(|v| v != "monotonic")
}

/// The calibration writer, when ticks are TSC readings (decided once per process).
static WRITER: LazyLock<Option<Mutex<Writer>>> = LazyLock::new(|| {
    kernel_uses_tsc()
        .then(calibrate_first)
        .flatten()
        .map(Mutex::new)
});

/// Whether ticks are TSC readings.
#[inline(always)]
fn use_tsc() -> bool {
    WRITER.is_some()
}

/// The calibration, behind a sequence lock: `SEQ` is odd while it is being written.
static SEQ: AtomicU64 = AtomicU64::new(0);
static ANCHOR_TICK: AtomicU64 = AtomicU64::new(0);
static ANCHOR_NS: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds per tick, times 2³².
static MULT: AtomicU64 = AtomicU64::new(1 << 32);
/// The tick after which the next calibration is due.
static NEXT_TICK: AtomicU64 = AtomicU64::new(u64::MAX);

/// The writer's state: the first pair of readings (the baseline), the interval to the
/// next calibration.
struct Writer {
    base_tick: u64,
    base_ns: u64,
    interval_ns: u64,
}

/// `(tick, CLOCK_MONOTONIC ns)` taken together: the TSC read on both sides of
/// `clock_gettime`, the midpoint kept; of up to four tries, the tightest (a try the thread
/// was preempted in is wide).
fn pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..4 {
        let a = sys::tsc().unwrap_or(0);
        let ns = sys::mono_ns();
        let b = sys::tsc().unwrap_or(0).max(a);
        if b - a < best.0 {
            best = (b - a, a + (b - a) / 2, ns);
        }
        if b - a < 2_000 {
            break;
        }
    }
    (best.1, best.2)
}

/// The first rate, measured over 0.25 ms; `None` (use `CLOCK_MONOTONIC` itself) when the
/// kernel clock does not advance with the TSC, e.g. under `faketime`, which stops or
/// scales the clocks it fakes, or when the rate is implausible (not 0.1–20 GHz).
fn calibrate_first() -> Option<Writer> {
    pair(); // the first reading pays for cold code and pages: not part of the baseline
    let (t0, n0) = pair();
    let (mut t1, mut n1) = pair();
    while n1.saturating_sub(n0) < 250_000 {
        if t1.wrapping_sub(t0) > 200_000_000 {
            return None; // 200M ticks (at least 10 ms) and not 0.25 ms of kernel time
        }
        (t1, n1) = pair();
    }
    let mult = (((n1 - n0) as u128) << 32) / u128::from((t1.checked_sub(t0)?).max(1));
    if !((1u128 << 32) / 20..=(10u128 << 32)).contains(&mult) {
        return None;
    }
    publish(t1, n1, mult as u64, 10_000_000);
    Some(Writer {
        base_tick: t0,
        base_ns: n0,
        interval_ns: 10_000_000,
    })
}

fn publish(tick: u64, ns: u64, mult: u64, interval_ns: u64) {
    let s = SEQ.load(Ordering::Relaxed);
    SEQ.store(s + 1, Ordering::Relaxed);
    fence(Ordering::Release);
    ANCHOR_TICK.store(tick, Ordering::Relaxed);
    ANCHOR_NS.store(ns, Ordering::Relaxed);
    MULT.store(mult, Ordering::Relaxed);
    let ticks = ((u128::from(interval_ns) << 32) / u128::from(mult.max(1))) as u64;
    NEXT_TICK.store(tick.saturating_add(ticks), Ordering::Relaxed);
    SEQ.store(s + 2, Ordering::Release);
}

/// Re-measures the rate over the whole baseline and re-anchors (one thread at a time;
/// the others go on with the published calibration).
#[cold]
fn recalibrate() {
    let Some(mut w) = WRITER.as_ref().and_then(Mutex::try_lock) else {
        return;
    };
    let (t, n) = pair();
    if t <= w.base_tick || n <= w.base_ns {
        return;
    }
    let mult = (((n - w.base_ns) as u128) << 32) / u128::from(t - w.base_tick);
    w.interval_ns = (w.interval_ns * 2).min(1_000_000_000);
    publish(t, n, mult as u64, w.interval_ns);
}

/// Reads the clock.
#[inline(always)]
pub fn now() -> Tick {
    if use_tsc() {
        sys::tsc().unwrap_or(0)
    } else {
        sys::mono_ns()
    }
}

/// Makes sure the calibration exists (the first one takes 0.25 ms): called when the
/// connector is initialized, and again (a no-op then) at session start.
pub fn init() {
    LazyLock::force(&WRITER);
}

/// The published calibration `(anchor tick, anchor ns, mult)`.
#[inline]
fn calibration() -> (u64, u64, u64) {
    loop {
        let s = SEQ.load(Ordering::Acquire);
        let c = (
            ANCHOR_TICK.load(Ordering::Relaxed),
            ANCHOR_NS.load(Ordering::Relaxed),
            MULT.load(Ordering::Relaxed),
        );
        fence(Ordering::Acquire);
        if s & 1 == 0 && SEQ.load(Ordering::Relaxed) == s {
            return c;
        }
        std::hint::spin_loop();
    }
}

/// Nanoseconds between two ticks (0 when `b` is before `a`).
#[inline]
pub fn ns_between(a: Tick, b: Tick) -> u64 {
    if !use_tsc() {
        return b.saturating_sub(a);
    }
    let (_, _, mult) = calibration();
    ((u128::from(b.saturating_sub(a)) * u128::from(mult)) >> 32) as u64
}

/// `CLOCK_MONOTONIC` nanoseconds of a tick (calibrating again when it is due).
#[inline]
pub fn mono_ns(t: Tick) -> u64 {
    if !use_tsc() {
        return t;
    }
    if t > NEXT_TICK.load(Ordering::Relaxed) {
        recalibrate();
    }
    let (tick, ns, mult) = calibration();
    if t >= tick {
        ns + ((u128::from(t - tick) * u128::from(mult)) >> 32) as u64
    } else {
        ns.saturating_sub(((u128::from(tick - t) * u128::from(mult)) >> 32) as u64)
    }
}

/// True when ticks are TSC readings (for the metadata and the tests).
pub fn uses_tsc() -> bool {
    use_tsc()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converted_ticks_follow_clock_monotonic() {
        init();
        for _ in 0..20 {
            let before = sys::mono_ns();
            let t = now();
            let after = sys::mono_ns();
            let ns = mono_ns(t);
            // Within 20 µs of the kernel's own reading (the first calibration's error
            // over the test's few milliseconds is far below that; scheduling is not).
            assert!(
                ns + 20_000 >= before && ns <= after + 20_000,
                "tick {t} -> {ns}, kernel {before}..{after}, tsc={}",
                uses_tsc()
            );
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
    }

    #[test]
    fn durations_match_the_kernel_clock() {
        init();
        let (t0, n0) = (now(), sys::mono_ns());
        std::thread::sleep(std::time::Duration::from_millis(30));
        let (t1, n1) = (now(), sys::mono_ns());
        let ours = ns_between(t0, t1) as f64;
        let kernel = (n1 - n0) as f64;
        assert!(
            (ours - kernel).abs() < kernel * 1e-3 + 20_000.0,
            "{ours} ns against {kernel} ns"
        );
        assert_eq!(ns_between(t1, t0), 0);
    }
}
