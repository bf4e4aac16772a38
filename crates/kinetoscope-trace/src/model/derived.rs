//! Results that later stages derive from a trace, kept with it so that every analysis
//! that needs one shares a single computation (the step windows that the overview, the
//! communication view, the critical path and the kernel sequences all start from).

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex, MutexGuard};

use rustc_hash::FxHashMap;

/// One value per type, computed on first use.
#[derive(Default)]
pub struct Derived {
    slots: Mutex<FxHashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Derived({} kept)", self.lock().len())
    }
}

impl Derived {
    /// The kept value of type `T`, made by `make` on first use. `make` runs without the
    /// lock held (it may derive other values); when two threads race, both compute and
    /// the first value stored is the one kept and returned to both.
    pub fn get_or_make<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let key = TypeId::of::<T>();
        let kept = self.lock().get(&key).cloned();
        let value = match kept {
            Some(v) => v,
            None => {
                let made: Arc<dyn Any + Send + Sync> = Arc::new(make());
                self.lock().entry(key).or_insert(made).clone()
            }
        };
        value
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("each slot is keyed by its value's type"))
    }

    fn lock(&self) -> MutexGuard<'_, FxHashMap<TypeId, Arc<dyn Any + Send + Sync>>> {
        // A panic while the lock was held cannot leave the map half-written.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}
