//! The model's encoders and decoders spread over threads.
//!
//! They are built from the parts of [`crate::shared::threads`] (the reading end that keeps a
//! read error until the blocks before it are out, the waits that do not wake the busier
//! thread, the threads' CPU times), but not from its pool of workers over independent items:
//! the model's state runs from record to record through a block, so what is spread here is
//! the work on each record (the model's site half, its address half, the printing) over two
//! threads in a pipeline, batch after batch, not whole blocks over a pool.

pub mod decode_pipeline;
pub(crate) mod decode_worker;
pub mod encode_worker;
pub(crate) mod shaped_decode;
