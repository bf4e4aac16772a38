//! The kernels' launch arguments, each distinct launch configuration stored once.
//!
//! A trace launches the same few configurations (device, stream, grid, block, registers,
//! shared memory, occupancy) over and over: a 1.5 M-kernel Nsight Systems export has a
//! few hundred. Storing them once and each kernel as (event, configuration id) costs
//! 8 bytes per kernel instead of the 80 of a full row.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

use super::budget::{grow, Charge, MemoryError};
use super::EventId;

/// How a kernel was launched: everything of its arguments but the event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelLaunch {
    /// CUDA device ordinal (`device`), or -1.
    pub device: i64,
    /// CUDA stream (`stream`), or -1.
    pub stream: i64,
    /// Launch grid `[x, y, z]` (zeros when absent).
    pub grid: [u32; 3],
    /// Launch block `[x, y, z]` (zeros when absent).
    pub block: [u32; 3],
    /// `registers per thread`, or 0.
    pub registers_per_thread: u32,
    /// `shared memory` in bytes, or 0.
    pub shared_memory: u64,
    /// `blocks per SM`; `None` when absent or written as `"inf"`.
    pub blocks_per_sm: Option<f32>,
    /// `warps per SM`; `None` when absent or not a number.
    pub warps_per_sm: Option<f32>,
    /// `est. achieved occupancy %` (0–100); `None` when absent or negative (unknown).
    pub est_achieved_occupancy_pct: Option<f32>,
}

impl KernelLaunch {
    /// The fields as integers (floats by their bits), for hashing and equality.
    fn key(&self) -> ([i64; 2], [u32; 7], u64, [Option<u32>; 3]) {
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        let bits = |f: Option<f32>| f.map(f32::to_bits);
        (
            [self.device, self.stream],
            [gx, gy, gz, bx, by, bz, self.registers_per_thread],
            self.shared_memory,
            [
                bits(self.blocks_per_sm),
                bits(self.warps_per_sm),
                bits(self.est_achieved_occupancy_pct),
            ],
        )
    }
}

/// A [`KernelLaunch`] compared and hashed by the bits of its fields.
#[derive(Clone, Copy, Debug)]
struct LaunchKey(KernelLaunch);

impl PartialEq for LaunchKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.key() == other.0.key()
    }
}

impl Eq for LaunchKey {}

impl Hash for LaunchKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.key().hash(state);
    }
}

/// The arguments of one kernel: its event and how it was launched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelArgs {
    /// The event.
    pub event: EventId,
    /// The launch configuration.
    pub launch: KernelLaunch,
}

/// Kernel arguments in event order; each distinct [`KernelLaunch`] stored once.
#[derive(Clone, Debug, Default)]
pub struct KernelTable {
    /// The kernel events, ascending.
    events: Vec<EventId>,
    /// Per kernel, its configuration's index in `launches`.
    launch_of: Vec<u32>,
    /// The distinct configurations, in order of first use.
    launches: Vec<KernelLaunch>,
    /// Configuration → its index in `launches`.
    ids: FxHashMap<LaunchKey, u32>,
}

impl PartialEq for KernelTable {
    /// Tables are equal when they hold the same rows, however their configurations
    /// are numbered.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl KernelTable {
    /// Number of kernels.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The kernel events, ascending (positions match [`KernelTable::get`]).
    pub fn events(&self) -> &[EventId] {
        &self.events
    }

    /// The `i`-th kernel's arguments.
    pub fn get(&self, i: usize) -> Option<KernelArgs> {
        let event = *self.events.get(i)?;
        let launch = self.launches[*self.launch_of.get(i)? as usize];
        Some(KernelArgs { event, launch })
    }

    /// Every kernel's arguments, in event order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = KernelArgs> + '_ {
        self.events
            .iter()
            .zip(&self.launch_of)
            .map(|(&event, &l)| KernelArgs {
                event,
                launch: self.launches[l as usize],
            })
    }

    /// The arguments of `event`, if it is a kernel of this table.
    pub fn of(&self, event: EventId) -> Option<KernelArgs> {
        let i = self.events.binary_search(&event).ok()?;
        self.get(i)
    }

    /// The distinct launch configurations.
    pub fn launches(&self) -> &[KernelLaunch] {
        &self.launches
    }

    /// Append a kernel (events must come in ascending order).
    pub fn push(&mut self, args: KernelArgs) {
        let id = self.intern(args.launch);
        self.events.push(args.event);
        self.launch_of.push(id);
    }

    /// Append a kernel, the growth of the table charged to `charge` first.
    pub(crate) fn push_charged(
        &mut self,
        args: KernelArgs,
        charge: &mut Charge,
    ) -> Result<(), MemoryError> {
        grow(&mut self.events, 1, charge)?;
        grow(&mut self.launch_of, 1, charge)?;
        if !self.ids.contains_key(&LaunchKey(args.launch)) {
            grow(&mut self.launches, 1, charge)?;
            // The hash table's slot: the key, its index and the control byte, twice over
            // for the table's spare room.
            charge.take(2 * (std::mem::size_of::<(LaunchKey, u32)>() as u64 + 1))?;
        }
        self.push(args);
        Ok(())
    }

    /// Make room for the kernels of `other`, the growth charged to `charge` first.
    pub(crate) fn reserve_for(
        &mut self,
        other: &KernelTable,
        charge: &mut Charge,
    ) -> Result<(), MemoryError> {
        grow(&mut self.events, other.len(), charge)?;
        grow(&mut self.launch_of, other.len(), charge)?;
        grow(&mut self.launches, other.launches.len(), charge)
    }

    /// Remove every kernel and configuration, keeping the room.
    pub fn clear(&mut self) {
        self.events.clear();
        self.launch_of.clear();
        self.launches.clear();
        self.ids.clear();
    }

    /// Append every kernel of `other`, their events moved up by `offset`.
    pub fn extend_shifted(&mut self, other: &KernelTable, offset: u32) {
        let ids: Vec<u32> = other.launches.iter().map(|&l| self.intern(l)).collect();
        self.events
            .extend(other.events.iter().map(|e| EventId(e.0 + offset)));
        self.launch_of
            .extend(other.launch_of.iter().map(|&l| ids[l as usize]));
    }

    /// Rewrite every configuration with `f` (one call per distinct configuration).
    pub fn map_launches(&mut self, mut f: impl FnMut(&mut KernelLaunch)) {
        self.launches.iter_mut().for_each(&mut f);
        self.ids = self
            .launches
            .iter()
            .enumerate()
            .map(|(i, &l)| (LaunchKey(l), i as u32))
            .collect();
    }

    /// The table as columns: the events, each kernel's configuration index, and the
    /// configurations.
    pub fn columns(&self) -> (&[EventId], &[u32], &[KernelLaunch]) {
        (&self.events, &self.launch_of, &self.launches)
    }

    /// A table from columns ([`KernelTable::columns`]); `None` when an index is out of
    /// range or the lengths differ.
    pub fn from_columns(
        events: Vec<EventId>,
        launch_of: Vec<u32>,
        launches: Vec<KernelLaunch>,
    ) -> Option<Self> {
        if events.len() != launch_of.len()
            || launch_of.iter().any(|&l| l as usize >= launches.len())
        {
            return None;
        }
        let mut table = Self {
            events,
            launch_of,
            launches,
            ids: FxHashMap::default(),
        };
        table.map_launches(|_| {});
        Some(table)
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> u64 {
        let b = std::mem::size_of::<(LaunchKey, u32)>() + 1;
        (self.events.capacity() * 4
            + self.launch_of.capacity() * 4
            + self.launches.capacity() * std::mem::size_of::<KernelLaunch>()
            + self.ids.capacity() * b) as u64
    }

    /// The index of `launch`, added if new.
    fn intern(&mut self, launch: KernelLaunch) -> u32 {
        let next = self.launches.len() as u32;
        let id = *self.ids.entry(LaunchKey(launch)).or_insert(next);
        if id == next {
            self.launches.push(launch);
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(grid: u32, occupancy: Option<f32>) -> KernelLaunch {
        KernelLaunch {
            device: 0,
            stream: 7,
            grid: [grid, 1, 1],
            block: [128, 1, 1],
            registers_per_thread: 32,
            shared_memory: 0,
            blocks_per_sm: None,
            warps_per_sm: None,
            est_achieved_occupancy_pct: occupancy,
        }
    }

    #[test]
    fn stores_each_configuration_once_and_gives_rows_back() {
        let mut t = KernelTable::default();
        let rows: Vec<KernelArgs> = (0..6)
            .map(|i| KernelArgs {
                event: EventId(i * 3),
                launch: launch(1 + i % 2, Some(50.0)),
            })
            .collect();
        rows.iter().for_each(|&r| t.push(r));
        assert_eq!(t.launches().len(), 2);
        assert_eq!(t.iter().collect::<Vec<_>>(), rows);
        assert_eq!(t.of(EventId(9)), Some(rows[3]));
        assert_eq!(t.of(EventId(10)), None);

        let mut merged = KernelTable::default();
        merged.push(KernelArgs {
            event: EventId(0),
            launch: launch(9, None),
        });
        merged.extend_shifted(&t, 100);
        assert_eq!(merged.len(), 7);
        assert_eq!(merged.launches().len(), 3);
        assert_eq!(merged.get(4).map(|k| k.event), Some(EventId(109)));
        assert_eq!(merged.get(4).map(|k| k.launch), Some(rows[3].launch));
    }

    #[test]
    fn rewritten_configurations_and_columns_round_trip() {
        let mut t = KernelTable::default();
        for i in 0..4 {
            t.push(KernelArgs {
                event: EventId(i),
                launch: launch(i % 2, None),
            });
        }
        t.map_launches(|l| l.device = 3);
        assert!(t.iter().all(|k| k.launch.device == 3));
        let (e, l, c) = t.columns();
        let back = KernelTable::from_columns(e.to_vec(), l.to_vec(), c.to_vec()).unwrap();
        assert_eq!(back, t);
        assert!(KernelTable::from_columns(vec![EventId(0)], vec![5], c.to_vec()).is_none());
    }
}
