//! Cancellation inside the core's long loops, without depending on Postgres.
//!
//! The extension installs a hook once per backend (`set_hook`), typically a function that runs
//! pgrx's `check_for_interrupts!()`; the core calls `check()` inside loops whose length grows
//! with an input (redaction, embedding, normalisation, hashing), so that a statement timeout or
//! a cancel request is honoured mid-way instead of after the whole input was processed.
//!
//! The hook may unwind (pgrx raises a Postgres ERROR as a Rust panic), so `check()` is only
//! called where unwinding is safe: no lock held, no half-built state that Drop would not clean
//! up. Without a hook (unit tests, other callers) `check()` does nothing.

use std::sync::OnceLock;

static HOOK: OnceLock<fn()> = OnceLock::new();

/// Installs the process-global interrupt hook. The first hook installed stays: later calls
/// are ignored, so calling this again (e.g. from every backend's `_PG_init`) is harmless.
///
/// ```text
/// fn check_for_interrupts() {
///     pgrx::check_for_interrupts!();
/// }
/// memory_fabric_core::interrupt::set_hook(check_for_interrupts); // in _PG_init
/// ```
pub fn set_hook(f: fn()) {
    let _ = HOOK.set(f);
}

/// Calls the interrupt hook, if one is installed. Cheap enough to call every few thousand
/// iterations of a hot loop (one atomic load when no hook is set).
#[inline]
pub fn check() {
    if let Some(f) = HOOK.get() {
        f();
    }
}

/// Calls `check()` once every `every` calls of `tick` on the same counter: for loops that want
/// to check every N iterations without a modulo of their own index.
#[derive(Debug)]
pub(crate) struct Every {
    every: usize,
    left: usize,
}

impl Every {
    pub(crate) fn new(every: usize) -> Every {
        let every = every.max(1);
        Every { every, left: every }
    }

    /// Counts `n` units of work (iterations, bytes) and checks for interrupts each time
    /// another `every` units have been done.
    #[inline]
    pub(crate) fn tick(&mut self, n: usize) {
        if n >= self.left {
            check();
            // Large steps count as one check: what matters is that long work checks regularly.
            self.left = self.every - ((n - self.left) % self.every);
        } else {
            self.left -= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    // The hook is process-global and tests run on parallel threads: the hook counts per thread,
    // so this test sees only its own calls whatever other tests run meanwhile. Only this test
    // installs a hook.
    thread_local! {
        static CALLS: Cell<usize> = const { Cell::new(0) };
    }
    static TOTAL: AtomicUsize = AtomicUsize::new(0);

    fn counting_hook() {
        CALLS.with(|c| c.set(c.get() + 1));
        TOTAL.fetch_add(1, Ordering::Relaxed);
    }

    fn calls_during(f: impl FnOnce()) -> usize {
        let before = CALLS.with(Cell::get);
        f();
        CALLS.with(Cell::get) - before
    }

    #[test]
    fn every_checks_once_per_period() {
        set_hook(counting_hook);
        let n = calls_during(|| {
            let mut e = Every::new(10);
            for _ in 0..95 {
                e.tick(1);
            }
        });
        assert_eq!(n, 9);
        let n = calls_during(|| {
            let mut e = Every::new(10);
            e.tick(25);
            e.tick(5);
        });
        assert_eq!(n, 2);
    }

    #[test]
    fn check_is_reached_in_long_redaction_and_embedding() {
        set_hook(counting_hook);
        assert_eq!(calls_during(check), 1);

        // 256 KiB, then 2 MiB (8 times as much) of text with many matches of every kind: cards, secrets, a tenant rule, plain words.
        let unit = "Customer paid with 4111 1111 1111 1111, password=hunter2, ticket TCK-42 and \
                    token sk-proj-abcdefghijklmnopqrstuvwxyz0123 about the refund policy. ";
        let text = |bytes: usize| unit.repeat(bytes / unit.len() + 1);
        let (small, large) = (text(256 << 10), text(2 << 20));
        let rules = vec![crate::policy::RedactionRule {
            name: "ticket".into(),
            pattern: r"TCK-\d+".into(),
            replacement: "[REDACTED:ticket]".into(),
        }];

        let compile = calls_during(|| {
            crate::redact::Redactor::new(true, &rules).unwrap();
        });
        assert!(compile >= rules.len(), "compiling checks between rules: {compile}");

        let redactor = crate::redact::Redactor::new(true, &rules).unwrap();
        let redact = |s: &str| {
            calls_during(|| {
                let mut o = crate::redact::Outcome::default();
                let out = redactor.redact_str(s, &mut o);
                assert!(o.count > 1_000 && !out.contains("hunter2"));
            })
        };
        let (r_small, r_large) = (redact(&small), redact(&large));
        assert!(r_small >= 20, "redaction of 256 KiB checked {r_small} times");
        assert!(r_large >= 4 * r_small, "redaction: {r_small} then {r_large}");

        let embed = |s: &str| {
            calls_during(|| {
                assert_eq!(crate::embed::embed(s).len(), crate::embed::DIMENSIONS);
            })
        };
        let (e_small, e_large) = (embed(&small), embed(&large));
        assert!(e_small >= 20, "embedding of 256 KiB checked {e_small} times");
        assert!(e_large >= 4 * e_small, "embedding: {e_small} then {e_large}");

        let hash = |s: &str| calls_during(|| assert_eq!(crate::text::content_hash(s).len(), 64));
        let (h_small, h_large) = (hash(&small), hash(&large));
        assert!(h_small >= 4 && h_large >= 4 * h_small, "hashing: {h_small} then {h_large}");

        let parse = |s: &str| calls_during(|| drop(crate::assertion::parse(s)));
        let (p_small, p_large) = (parse(&small), parse(&large));
        assert!(p_small >= 20 && p_large >= 4 * p_small, "assertions: {p_small} then {p_large}");

        assert!(TOTAL.load(Ordering::Relaxed) >= r_large + e_large);
    }
}
