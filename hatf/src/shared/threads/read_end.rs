//! The reading end of a pipeline: the calling thread reads items until the input ends or
//! fails, and a failure is kept until every item read before it has been handed on, so that a
//! threaded run writes the same output before its error as a run through the items one by one.

/// Whether the input may give more items, and the failure that ended it, if any.
pub struct ReadEnd<E> {
    /// False once the input ended, failed or was closed: nothing more is read.
    open: bool,
    /// The input's failure, for the caller to return once the items before it are out.
    error: Option<E>,
}

impl<E> Default for ReadEnd<E> {
    fn default() -> Self {
        ReadEnd {
            open: true,
            error: None,
        }
    }
}

impl<E> ReadEnd<E> {
    /// The next item `next` gives; `None` once the input has ended, failed (the failure is
    /// kept) or been closed, without calling `next` again.
    pub fn read<I>(&mut self, next: impl FnOnce() -> Result<Option<I>, E>) -> Option<I> {
        if !self.open {
            return None;
        }
        match next() {
            Ok(Some(item)) => Some(item),
            Ok(None) => {
                self.open = false;
                None
            }
            Err(e) => {
                self.open = false;
                self.error = Some(e);
                None
            }
        }
    }

    /// True while more items may be read.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Reads no more (the workers are gone).
    pub fn close(&mut self) {
        self.open = false;
    }

    /// The failure that ended the input, taken out.
    pub fn take_error(&mut self) -> Option<E> {
        self.error.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_ends_the_input_and_is_kept() {
        let mut items = [Ok(Some(1)), Err("bad"), Ok(Some(3))].into_iter();
        let mut input = ReadEnd::default();
        assert_eq!(input.read(|| items.next().unwrap()), Some(1));
        assert_eq!(input.read(|| items.next().unwrap()), None);
        assert!(!input.is_open());
        // Not read again after the failure.
        assert_eq!(input.read(|| items.next().unwrap()), None);
        assert_eq!(items.len(), 1);
        assert_eq!(input.take_error(), Some("bad"));
        assert_eq!(input.take_error(), None);
    }

    #[test]
    fn the_end_and_a_close_stop_reading_without_an_error() {
        let mut input = ReadEnd::<String>::default();
        assert_eq!(input.read(|| Ok(None::<u8>)), None);
        assert!(!input.is_open());
        assert_eq!(input.take_error(), None);
        let mut input = ReadEnd::<String>::default();
        input.close();
        assert_eq!(
            input.read(|| -> Result<Option<u8>, String> { panic!("read") }),
            None
        );
        assert_eq!(input.take_error(), None);
    }
}
