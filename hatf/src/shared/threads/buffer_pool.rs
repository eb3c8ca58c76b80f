//! Buffers handed back after use, so that the next item reuses memory already paged in: a
//! block's text is about 13 MB, and a fresh buffer for each (the allocator maps buffers that
//! large anew) page-faulted 3,300 times per block.

use std::sync::Mutex;

/// Buffers handed back, kept for the next user on any thread.
pub struct BufferPool<T> {
    free: Mutex<Vec<T>>,
    keep: usize,
}

impl<T: Default> BufferPool<T> {
    /// A pool keeping at most `keep` buffers.
    pub fn new(keep: usize) -> BufferPool<T> {
        BufferPool {
            free: Mutex::new(Vec::new()),
            keep,
        }
    }

    /// A buffer handed back earlier (as it was handed back), or a new one.
    pub fn take(&self) -> T {
        self.free
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or_default()
    }

    /// Hands `buffer` back; dropped when the pool is full.
    pub fn give(&self, buffer: T) {
        if let Ok(mut free) = self.free.lock() {
            if free.len() < self.keep {
                free.push(buffer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_as_handed_back_up_to_the_limit() {
        let pool = BufferPool::<Vec<u8>>::new(1);
        assert!(pool.take().is_empty());
        pool.give(vec![1, 2]);
        pool.give(vec![3]);
        assert_eq!(pool.take(), vec![1, 2]);
        assert!(pool.take().is_empty(), "the second was dropped");
    }
}
