//! Locks that outlive a panic: a thread that panicked while holding one leaves data that is still
//! consistent for every use here (lists, maps, flags), so the engine keeps going instead of
//! poisoning every later call. One helper for the whole workspace.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex`] without poisoning.
pub trait LockExt<T> {
    /// Locks, taking the guard even if a holder panicked.
    fn locked(&self) -> MutexGuard<'_, T>;
    /// The value, even if a holder panicked.
    fn into_value(self) -> T;
}

impl<T> LockExt<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn into_value(self) -> T {
        self.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// [`RwLock`] without poisoning.
pub trait RwLockExt<T> {
    /// A read guard, even if a writer panicked.
    fn reading(&self) -> RwLockReadGuard<'_, T>;
    /// A write guard, even if a writer panicked.
    fn writing(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T> RwLockExt<T> for RwLock<T> {
    fn reading(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn writing(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_holder_does_not_poison() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let _g = m2.locked();
            panic!("holder panics");
        })
        .join();
        assert!(m.is_poisoned());
        *m.locked() += 1;
        assert_eq!(*m.locked(), 2);
        let rw = RwLock::new(5);
        *rw.writing() += 1;
        assert_eq!(*rw.reading(), 6);
    }
}
