//! The model's encoders and decoders spread over threads.

pub mod decode_pipeline;
pub(crate) mod decode_worker;
pub mod encode_worker;
pub(crate) mod shaped_decode;
