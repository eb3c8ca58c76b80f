//! Tables that give names, methods and threads small numbers in order of first appearance, and
//! the code that says "one of these few candidates, a new entry, or entry k".

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// How many candidates a code can point at (codes `0..CANDIDATES`).
pub const CANDIDATES: usize = 4;
/// The code for "a new entry follows".
pub const NEW: u64 = CANDIDATES as u64;

/// Values numbered 0, 1, 2, ... in order of first appearance.
#[derive(Debug, Clone)]
pub struct Table<T: Clone + Eq + Hash> {
    items: Vec<T>,
    ids: HashMap<T, u32>,
}

impl<T: Clone + Eq + Hash> Default for Table<T> {
    fn default() -> Self {
        Table {
            items: Vec::new(),
            ids: HashMap::new(),
        }
    }
}

impl<T: Clone + Eq + Hash> Table<T> {
    /// The number of `v`, if it has one.
    pub fn id<Q: ?Sized + Hash + Eq>(&self, v: &Q) -> Option<u32>
    where
        T: Borrow<Q>,
    {
        self.ids.get(v).copied()
    }

    /// Gives `v` the next number (the caller checked it has none).
    pub fn add(&mut self, v: T) -> u32 {
        let id = self.items.len() as u32;
        self.ids.insert(v.clone(), id);
        self.items.push(v);
        id
    }

    /// The value numbered `id`.
    pub fn get(&self, id: u32) -> Option<&T> {
        self.items.get(id as usize)
    }

    /// How many values are numbered.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when the table is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The code of entry `id` (`None` = not in the table yet) given the candidates.
pub fn code(candidates: &[u32], id: Option<u32>) -> u64 {
    match id {
        None => NEW,
        Some(id) => match candidates.iter().position(|&c| c == id) {
            Some(i) => i as u64,
            None => NEW + 1 + u64::from(id),
        },
    }
}

/// The entry a code names: `Ok(None)` for "new", an error for a code out of range.
pub fn entry(
    candidates: &[u32],
    code: u64,
    table_len: usize,
    what: &str,
) -> Result<Option<u32>, String> {
    if code < NEW {
        return candidates
            .get(code as usize)
            .map(|&c| Some(c))
            .ok_or_else(|| format!("{what} code {code} names a candidate that does not exist"));
    }
    if code == NEW {
        return Ok(None);
    }
    let k = code - NEW - 1;
    if k < table_len as u64 {
        Ok(Some(k as u32))
    } else {
        Err(format!("{what} code {code} is past the {table_len} known"))
    }
}
