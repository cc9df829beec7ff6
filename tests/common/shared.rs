//! Engines shared by the tests of one binary, released when the process exits.

use super::*;

/// Engines shared by the tests of one binary: made at first use, and released when the process
/// exits, before the OpenCL drivers' own exit-time teardown, as a program's engines are when
/// it ends. A `static` is never dropped, so a test binary would otherwise exit with every
/// context, queue and program alive; one binary once died that way (SIGSEGV after all its
/// tests had passed, PoCL 3.1 in CI, 2026-11-26; not seen in 45 runs here nor under Valgrind).
pub struct SharedEngines(OnceLock<&'static [Engine]>);

impl SharedEngines {
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    /// The engines, made by `make` at the first call.
    pub fn get(&'static self, make: impl FnOnce() -> Vec<Engine>) -> &'static [Engine] {
        let engines = self.0.get_or_init(|| {
            let raw: *mut [Engine] = Box::into_raw(make().into_boxed_slice());
            lock_held().push(Held(raw));
            // SAFETY: the box is freed only at exit (release_held), when no test runs.
            unsafe { &*raw }
        });
        // Registered again at every call (the first one to run at exit releases them all, the
        // others find nothing): it must run before the drivers' exit-time destructors, which
        // run in reverse order of registration, and a driver may register them late (NVIDIA's
        // compiler at its first build: a binary running one blur test died with SIGSEGV at
        // exit, its engines released after the compiler, a background build still inside it).
        // SAFETY: registers a plain function with the C library; it takes no arguments.
        unsafe { atexit(release_held) };
        engines
    }
}

/// Engines for [`release_held`] to free.
pub(super) struct Held(*mut [Engine]);
// SAFETY: the pointer is only dereferenced by `release_held`, on the exiting thread.
unsafe impl Send for Held {}

pub(super) static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

pub(super) fn lock_held() -> std::sync::MutexGuard<'static, Vec<Held>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> std::os::raw::c_int;
}

/// Drops every [`SharedEngines`] set, last made first (run by the C library at exit).
extern "C" fn release_held() {
    let held = std::mem::take(&mut *lock_held());
    // No unwinding out of a C callback.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        for h in held.into_iter().rev() {
            // SAFETY: made by Box::into_raw in `get`, freed once; the tests have all ended.
            drop(unsafe { Box::from_raw(h.0) });
        }
    }));
}
