//! Counted caps: live-queue streams (in total and per session) and PostgreSQL connections (in
//! total and per role). A pass is held for as long as the thing it counts, and given back when
//! dropped, so no path can forget to release it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// At most `max` passes out at once.
#[derive(Debug)]
pub struct Gate {
    out: AtomicUsize,
    pub max: usize,
}

/// One place in a gate, given back on drop.
#[derive(Debug)]
pub struct Pass(Arc<Gate>);

impl Gate {
    pub fn new(max: usize) -> Arc<Gate> {
        Arc::new(Gate { out: AtomicUsize::new(0), max })
    }

    /// A place, or None when all are taken.
    pub fn enter(self: &Arc<Gate>) -> Option<Pass> {
        self.out
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.max).then_some(n + 1))
            .ok()
            .map(|_| Pass(self.clone()))
    }

    pub fn taken(&self) -> usize {
        self.out.load(Ordering::Acquire)
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.0.out.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The PostgreSQL connections the console holds, per role and in all.
#[derive(Debug)]
pub struct DbSlots {
    held: Mutex<(usize, HashMap<String, usize>)>,
    pub total: usize,
    pub per_role: usize,
}

/// Why no connection may be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    Role(usize),
    Total(usize),
}

/// One connection's place, given back when dropped with the connection.
#[derive(Debug)]
pub struct DbSlot {
    slots: Arc<DbSlots>,
    role: String,
}

impl DbSlots {
    pub fn new(total: usize, per_role: usize) -> Arc<DbSlots> {
        Arc::new(DbSlots { held: Mutex::new((0, HashMap::new())), total, per_role })
    }

    pub fn take(self: &Arc<DbSlots>, role: &str) -> Result<DbSlot, Full> {
        let mut g = self.held.lock().unwrap();
        let mine = g.1.get(role).copied().unwrap_or(0);
        if mine >= self.per_role {
            return Err(Full::Role(mine));
        }
        if g.0 >= self.total {
            return Err(Full::Total(g.0));
        }
        g.0 += 1;
        *g.1.entry(role.to_string()).or_default() += 1;
        Ok(DbSlot { slots: self.clone(), role: role.to_string() })
    }

    /// Connections held: for the role, in all.
    pub fn held(&self, role: &str) -> (usize, usize) {
        let g = self.held.lock().unwrap();
        (g.1.get(role).copied().unwrap_or(0), g.0)
    }
}

impl Drop for DbSlot {
    fn drop(&mut self) {
        let mut g = self.slots.held.lock().unwrap();
        g.0 -= 1;
        if let Some(n) = g.1.get_mut(&self.role) {
            *n -= 1;
            if *n == 0 {
                g.1.remove(&self.role);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_lets_max_through_and_takes_them_back() {
        let g = Gate::new(2);
        let a = g.enter().unwrap();
        let b = g.enter().unwrap();
        assert!(g.enter().is_none());
        drop(a);
        let c = g.enter().unwrap();
        assert_eq!(g.taken(), 2);
        drop((b, c));
        assert_eq!(g.taken(), 0);
    }

    #[test]
    fn database_slots_per_role_and_in_all() {
        let s = DbSlots::new(3, 2);
        let a1 = s.take("ana").unwrap();
        let a2 = s.take("ana").unwrap();
        assert_eq!(s.take("ana").unwrap_err(), Full::Role(2));
        let b1 = s.take("bob").unwrap();
        assert_eq!(s.take("bob").unwrap_err(), Full::Total(3));
        drop(a1);
        assert_eq!(s.held("ana"), (1, 2));
        let b2 = s.take("bob").unwrap();
        drop((a2, b1, b2));
        assert_eq!(s.held("ana"), (0, 0));
        assert!(s.held.lock().unwrap().1.is_empty());
    }
}
