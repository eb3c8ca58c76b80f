//! Every object a block has named, in move-to-front order: an object reference is coded as
//! the number of distinct objects used since this one was last used (its rank, 0 = the most
//! recent).
//!
//! Most references are to one of the last few objects, so the most recent [`FRONT`] objects
//! are kept in a small array (a window that slides down a larger one as objects are put in
//! front), searched and shifted in place; only the others live in a
//! [`LiveSet`] ordered by when they dropped out of the array (oldest first). The order of all
//! objects is the array followed by that set from its newest end, so the ranks are exactly
//! those of one set over all objects, at the cost of a scan of a few words for most references
//! instead of two tree walks and two hash-table updates.

use super::live::LiveSet;
use super::rank_list::RankList;

/// Objects kept in the array (a multiple of 4, see [`Recent::find_in_front`]).
///
/// 64, not 32: references to ranks 32 to 63 are still common in object traces, those past 64
/// far fewer. A reference past the array costs a decoder about
/// 300 instructions (a select in the [`RankList`], then its object pushed back in front) and
/// an encoder a search of its [`LiveSet`]; within the array it is a move of its rank's words,
/// so the larger array costs both fewer instructions on such traces.
pub const FRONT: usize = 64;

/// Ranks from which [`Recent::move_to_front`] calls `memmove` (whose vector moves beat
/// [`shift_up`]'s four words a step on longer moves) instead of moving the words in place.
const MEMMOVE_FROM: usize = 32;

/// Places [`Recent::head`] takes: the array slides down [`Recent::slots`] by one place for each
/// object put in front, and back up only once every this many. All the values of a `u8`, so
/// that the compiler sees every index in bounds from the type, with no mask.
const HEADS: usize = 1 << u8::BITS;

/// The move-to-front list of a block's objects.
pub struct Recent {
    /// The array: `slots[head..head + FRONT]` are the most recent objects, most recent first;
    /// `front_len` of them are used.
    ///
    /// An object put in front (one leaving the array for `rest` each time, once it is full)
    /// moves `head` down by one instead of the whole array up: moving 63 words would be a call
    /// to `memmove` of some 68 instructions for every new or older object, more than the load
    /// that finding the array costs on every reference.
    slots: [u64; HEADS + FRONT],
    /// Where the array starts in `slots`.
    head: u8,
    front_len: usize,
    /// The older objects, by when they left the array.
    rest: Older,
}

impl Default for Recent {
    fn default() -> Self {
        Recent {
            slots: [0; HEADS + FRONT],
            head: 0,
            front_len: 0,
            rest: Older::Tree(LiveSet::default()),
        }
    }
}

impl Recent {
    /// A list for a decoder, which reads most references as ranks: its older objects are a
    /// [`RankList`], without a table from id to place (an update for each object entering or
    /// leaving them). The decoder tells a new object (most objects allocated) from one to
    /// look for ([`Recent::touch_allocated`]). The ranks are those of [`Recent::default`]'s
    /// list.
    pub fn for_decoding() -> Recent {
        Recent {
            rest: Older::Bits(RankList::default()),
            ..Recent::default()
        }
    }

    /// Forgets every object, keeping the memory for the next block.
    pub fn clear(&mut self) {
        self.front_len = 0;
        self.rest.clear();
    }

    /// Number of objects known.
    pub fn count(&self) -> u64 {
        self.front_len as u64 + self.rest.len()
    }

    /// The array of the most recent objects (`front_len` of them used).
    #[inline(always)]
    fn front(&self) -> &[u64; FRONT] {
        // (`head` is below `HEADS`, which the compiler knows: no bounds check.)
        let at = usize::from(self.head);
        let window = self.slots[at..].first_chunk::<FRONT>();
        window.expect("the array is inside its slots")
    }

    /// [`Recent::front`], to change.
    #[inline(always)]
    fn front_mut(&mut self) -> &mut [u64; FRONT] {
        let at = usize::from(self.head);
        let window = self.slots[at..].first_chunk_mut::<FRONT>();
        window.expect("the array is inside its slots")
    }

    /// Puts `obj` (not in the array) at the front, pushing the array's oldest into `rest`.
    #[inline]
    fn push_front(&mut self, obj: u64) {
        if self.front_len == FRONT {
            self.rest.push(self.front()[FRONT - 1]);
        } else {
            self.front_len += 1;
        }
        self.head = match self.head.checked_sub(1) {
            Some(at) => at,
            None => self.slide_up(),
        };
        self.front_mut()[0] = obj;
    }

    /// Moves the array at the bottom of `slots` (all but its oldest object, which a push
    /// drops) to the top, so that the next push puts its object just below it, at
    /// `HEADS - 1`, which it returns.
    #[cold]
    #[inline(never)]
    fn slide_up(&mut self) -> u8 {
        self.slots.copy_within(0..FRONT - 1, HEADS);
        u8::MAX
    }

    /// Puts `obj`, which the list does not hold (the encoder coded it as new), at the front:
    /// what [`Recent::touch`] does for such an object, without looking for it first.
    #[inline]
    pub fn push_new(&mut self, obj: u64) {
        self.push_front(obj);
    }

    /// [`Recent::touch`] of an allocated object, for a decoder that knows whether the list
    /// may hold it: when not `known`, it is put in front with no search.
    ///
    /// A decoder's model knows every object its list holds (and maybe more) from its table of
    /// objects, which an allocation updates anyway: a set of the list's ids, kept here, would
    /// be a second table update (about 80 instructions) for every allocation.
    #[inline]
    pub fn touch_allocated(&mut self, obj: u64, known: bool) -> Option<u64> {
        if known {
            return self.touch(obj);
        }
        self.push_front(obj);
        None
    }

    /// Marks `obj` as the most recently used object; returns its previous rank (0 = it was
    /// already the most recent), or `None` when it is new.
    #[inline(always)]
    pub fn touch(&mut self, obj: u64) -> Option<u64> {
        // About half the references of a trace are to the object named last:
        // answered here, inlined in the caller, with no call and no search.
        if self.front()[0] == obj && self.front_len > 0 {
            return Some(0);
        }
        self.touch_other(obj)
    }

    /// [`Recent::touch`] of an object that is not the most recent one.
    #[inline(never)]
    fn touch_other(&mut self, obj: u64) -> Option<u64> {
        if let Some(p) = self.find_in_front(obj) {
            self.move_to_front(p);
            return Some(p as u64);
        }
        let rank = self.rest.remove(obj).map(|r| self.front_len as u64 + r);
        self.push_front(obj);
        rank
    }

    /// Where `obj` is in the array, if it is.
    ///
    /// The whole array is compared four words at a time, with no branch inside a group (a
    /// search word by word would be a fifth of [`Recent::touch`]); the slots past `front_len` hold
    /// objects of an earlier block, so a first match there means no match.
    #[inline(always)]
    fn find_in_front(&self, obj: u64) -> Option<usize> {
        for (g, group) in self.front().chunks_exact(4).enumerate() {
            let hit = (group[0] == obj) | (group[1] == obj) | (group[2] == obj) | (group[3] == obj);
            if hit {
                let p = 4 * g + group.iter().position(|&o| o == obj).unwrap_or(0);
                return (p < self.front_len).then_some(p);
            }
        }
        None
    }

    /// Moves the object at `p` in the array to its front.
    #[inline(always)]
    fn move_to_front(&mut self, p: usize) {
        let front = self.front_mut();
        let obj = front[p % FRONT];
        // Most ranks are 0 or 1: moves in place, not a call to `memmove`.
        match p {
            0 => {}
            1 => front[1] = front[0],
            2..MEMMOVE_FROM => shift_up(front, p),
            _ => front.copy_within(0..p.min(FRONT - 1), 1),
        }
        front[0] = obj;
    }

    /// [`Recent::take`] for an object in the array of the most recent ones; `None` (and no
    /// change) for a rank beyond it.
    #[inline(always)]
    pub fn take_front(&mut self, rank: u64) -> Option<u64> {
        if rank < self.front_len as u64 {
            // (`front_len` is at most `FRONT`, which the mask tells the compiler: no bounds
            // check.)
            let p = rank as usize % FRONT;
            let obj = self.front()[p];
            self.move_to_front(p);
            return Some(obj);
        }
        None
    }

    /// The object of rank `rank`, which becomes the most recent; `None` when there is no such
    /// object.
    pub fn take(&mut self, rank: u64) -> Option<u64> {
        if let Some(obj) = self.take_front(rank) {
            return Some(obj);
        }
        let obj = self.rest.take(rank - self.front_len as u64)?;
        self.push_front(obj);
        Some(obj)
    }
}

/// Moves `front[..p]` one place up, to `front[1..=p]` (what `copy_within(0..p, 1)` does), four
/// words at a time from the top: most moves are a few words, for which the call to `memmove`
/// and its dispatch on the length cost more than the moves.
#[inline(always)]
fn shift_up(front: &mut [u64; FRONT], p: usize) {
    let mut top = p.min(FRONT - 1);
    while top >= 4 {
        let four: [u64; 4] = [
            front[top - 4],
            front[top - 3],
            front[top - 2],
            front[top - 1],
        ];
        front[top - 3..=top].copy_from_slice(&four);
        top -= 4;
    }
    // The last one to three, from the top down (written out: as a loop, the compiler made it
    // a call to `memmove` again).
    match top {
        3 => {
            front[3] = front[2];
            front[2] = front[1];
            front[1] = front[0];
        }
        2 => {
            front[2] = front[1];
            front[1] = front[0];
        }
        1 => front[1] = front[0],
        _ => {}
    }
}

/// The objects older than the array: an encoder's, searched by id, in a [`LiveSet`] ordered
/// oldest first; a decoder's, mostly read by rank, in a [`RankList`].
enum Older {
    Tree(LiveSet),
    Bits(RankList),
}

impl Older {
    fn len(&self) -> u64 {
        match self {
            Older::Tree(s) => s.len(),
            Older::Bits(l) => l.len(),
        }
    }

    fn clear(&mut self) {
        match self {
            Older::Tree(s) => s.clear(),
            Older::Bits(l) => l.clear(),
        }
    }

    /// Puts `obj` at the newest end.
    #[inline]
    fn push(&mut self, obj: u64) {
        match self {
            Older::Tree(s) => s.allocate(obj),
            Older::Bits(l) => l.push(obj),
        }
    }

    /// Removes `obj` if it is there; returns its rank from the newest.
    fn remove(&mut self, obj: u64) -> Option<u64> {
        match self {
            Older::Tree(s) => {
                let older = s.len();
                s.kill(obj).map(|r| older - 1 - r)
            }
            Older::Bits(l) => l.remove(obj),
        }
    }

    /// Removes and returns the object of rank `rank` from the newest.
    fn take(&mut self, rank: u64) -> Option<u64> {
        match self {
            Older::Tree(s) => {
                let older = s.len();
                if rank >= older {
                    return None;
                }
                s.kill_rank(older - 1 - rank)
            }
            Older::Bits(l) => l.take_from_newest(rank),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`shift_up`] moves what `copy_within` moves, for every length.
    #[test]
    fn shift_up_is_copy_within() {
        for p in 0..FRONT {
            let mut a: [u64; FRONT] = std::array::from_fn(|i| i as u64 * 7 + 1);
            let mut b = a;
            shift_up(&mut a, p);
            b.copy_within(0..p, 1);
            assert_eq!(a, b, "p = {p}");
        }
    }

    /// The ranks are those of a plain move-to-front list, and `take` undoes `touch`, before
    /// and after the list is cleared.
    #[test]
    fn ranks_are_move_to_front_ranks() {
        let mut list: Vec<u64> = Vec::new();
        let mut enc = Recent::default();
        let mut dec = Recent::default();
        // A decoder's list, told of new objects by `push_new` (references coded as new) or
        // `touch_allocated` (allocations, which may name an object it holds; told it may when
        // it does, and sometimes when it does not).
        let mut fresh = Recent::for_decoding();
        let mut x = 7u64;
        for step in 0..50_000 {
            // A new block halfway: the array's slots still hold the old objects, which must
            // not be found.
            if step == 25_000 {
                list.clear();
                enc.clear();
                dec.clear();
                fresh.clear();
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly recent objects, sometimes old or new ones.
            let obj = match (x >> 60) % 4 {
                0 => (x >> 20) % 2000 + 1,
                _ => list.get(((x >> 30) % 6) as usize).copied().unwrap_or(1),
            };
            let expect = list.iter().position(|&o| o == obj);
            if let Some(p) = expect {
                list.remove(p);
            }
            list.insert(0, obj);
            let got = enc.touch(obj);
            assert_eq!(got, expect.map(|p| p as u64));
            let allocation = (x >> 8).is_multiple_of(5);
            match got {
                Some(rank) => assert_eq!(dec.take(rank), Some(obj)),
                None => assert_eq!(dec.touch(obj), None),
            }
            match (allocation, got) {
                (true, _) => {
                    let known = got.is_some() || (x >> 12).is_multiple_of(3);
                    assert_eq!(fresh.touch_allocated(obj, known), got, "step {step}");
                }
                (false, Some(rank)) => assert_eq!(fresh.take(rank), Some(obj), "step {step}"),
                (false, None) => fresh.push_new(obj),
            }
            assert_eq!(enc.count(), list.len() as u64);
            assert_eq!(fresh.count(), list.len() as u64);
        }
        assert_eq!(dec.take(dec.count()), None);
        assert_eq!(fresh.take(fresh.count()), None);
    }
}
