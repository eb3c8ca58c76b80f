//! Pipelines of threads: one family of parts that every threaded encoder and decoder is built
//! from.
//!
//! Every pipeline has the same shape. The calling thread reads the input and cuts it into
//! items (blocks of text, container blocks, batches of records) through a [`read_end::ReadEnd`],
//! which stops at the end or at the first failure and keeps that failure to be returned after
//! everything read before it. Worker threads take the items from a bounded queue
//! ([`worker_pool`]), and their results come back to the calling thread, which hands them on
//! in item order, so the output is the same whatever the thread count; the first error in item
//! order wins, and a worker that panics is an error of its item, not of the program.
//!
//! Two ways of handing results on, for two kinds of items:
//!
//! - [`ordered::ordered`]: each item's result comes back whole (an encoded block, a few hundred
//!   kilobytes).
//! - [`streamed::streamed`]: each item's result comes back in pieces while it is being made,
//!   and the calling thread works on an item itself when it would otherwise wait (a decoded
//!   block's text, megabytes, which would otherwise be held whole).
//!
//! The allocation model's threads (`allocation_model/threads/`) use the same reading end
//! and waiting ([`spin_recv`], [`cpu_time`]) but not the pool: their items are not
//! independent. The model's state runs from record to record through a block, and what is
//! split over two threads is the work on each record (its site half and its address half),
//! not the blocks, so there is one worker, fed batch after batch of the same block, whose
//! results come back in the order they were sent without being sorted.

pub mod buffer_pool;
pub mod cpu_time;
pub mod ordered;
pub mod read_end;
pub mod spin_recv;
pub mod streamed;
pub mod worker_pool;
