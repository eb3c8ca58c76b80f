//! The encodings compared in the paper's Table 4, as functions from allocation events to byte
//! streams and back.
//!
//! Every encoding here sees only the [`AllocEvent`]s, so relative to an original text trace each
//! loses what the events do not carry: call sites and return addresses (mtrace's `@ caller`),
//! timestamps, comment and header lines, spacing and number spelling. Within the events each of
//! them is lossless: `decode(encode(events)) == events`, or `encode` fails and says why.

pub mod ascii;
pub mod best;
pub mod simple;
pub mod split;

use crate::formats::native::{model as native_events, NativeReader, NativeWriter};
use crate::shared::allocation::event::AllocEvent;

/// One independently compressed stream of an encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// What the stream holds (`main`, `addresses`, or a column name).
    pub name: &'static str,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// The paper's encodings, in Table 4's column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Fixed 16-byte records (`simple`).
    Simple,
    /// One text line per event (`ascii`).
    Ascii,
    /// HATF 1.0, default configuration, metadata only where a value would not fit (`hatf-naive`).
    HatfNaive,
    /// HATF 1.0 with the section 3.3 heuristics (`hatf-best`).
    HatfBest,
    /// Simple binary's columns as separate streams (`split`).
    Split,
    /// HATF best with the stored bytes of every address in a second stream (`hatf-splitaddr`).
    HatfSplitAddr,
    /// Not the paper's: HATF 1.0 records of `dtds/hatf10.dtd` through the generated codec, in
    /// an uncompressed Meta-TF container (`hatf10-dtd`, [`crate::formats::hatf10_dtd`]).
    Hatf10Dtd,
}

impl Encoding {
    /// All encodings, in Table 4's order, then ours.
    pub const ALL: [Encoding; 7] = [
        Encoding::Simple,
        Encoding::Ascii,
        Encoding::HatfNaive,
        Encoding::HatfBest,
        Encoding::Split,
        Encoding::HatfSplitAddr,
        Encoding::Hatf10Dtd,
    ];

    /// The name used on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Simple => "simple",
            Encoding::Ascii => "ascii",
            Encoding::HatfNaive => "hatf-naive",
            Encoding::HatfBest => "hatf-best",
            Encoding::Split => "split",
            Encoding::HatfSplitAddr => "hatf-splitaddr",
            Encoding::Hatf10Dtd => crate::formats::hatf10_dtd::NAME,
        }
    }

    /// The encoding called `name`.
    pub fn from_name(name: &str) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.name() == name)
    }

    /// What this encoding keeps of an event trace and what it cannot hold.
    pub fn limits(self) -> &'static str {
        match self {
            Encoding::Simple | Encoding::Split => {
                "all event fields; thread ids of 2^48 and more, a realloc with an extra value, or an old \
                 address on a non-realloc event are refused"
            }
            Encoding::Ascii => "all event fields",
            Encoding::HatfNaive
            | Encoding::HatfBest
            | Encoding::HatfSplitAddr
            | Encoding::Hatf10Dtd => {
                "all event fields (calloc/memalign and values a record has no field for travel in attributes)"
            }
        }
    }
}

/// Encodes `events`; the result's streams are compressed independently by `hatf compare`.
pub fn encode(encoding: Encoding, events: &[AllocEvent]) -> Result<Vec<Stream>, String> {
    let one = |bytes| {
        vec![Stream {
            name: "main",
            bytes,
        }]
    };
    match encoding {
        Encoding::Simple => simple::encode(events).map(one),
        Encoding::Ascii => Ok(one(ascii::encode(events))),
        Encoding::HatfNaive => native_events::write_events(events, Vec::new())
            .map(one)
            .map_err(|e| e.to_string()),
        Encoding::HatfBest => {
            let mut w = NativeWriter::new(Vec::new());
            best::write(events, &mut w).map_err(|e| e.to_string())?;
            let (bytes, _) = w.finish().map_err(|e| e.to_string())?;
            Ok(one(bytes))
        }
        Encoding::Split => split::encode(events),
        Encoding::Hatf10Dtd => crate::formats::hatf10_dtd::encode(events).map(one),
        Encoding::HatfSplitAddr => {
            let mut w = NativeWriter::with_split_addresses(Vec::new());
            best::write(events, &mut w).map_err(|e| e.to_string())?;
            let (main, addresses) = w.finish().map_err(|e| e.to_string())?;
            Ok(vec![
                Stream {
                    name: "main",
                    bytes: main,
                },
                Stream {
                    name: "addresses",
                    bytes: addresses.unwrap_or_default(),
                },
            ])
        }
    }
}

fn stream<'s>(streams: &'s [Stream], name: &str) -> Result<&'s [u8], String> {
    streams
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.bytes.as_slice())
        .ok_or_else(|| format!("the {name} stream is missing"))
}

/// Decodes streams written by [`encode`] back into the events.
pub fn decode(encoding: Encoding, streams: &[Stream]) -> Result<Vec<AllocEvent>, String> {
    match encoding {
        Encoding::Simple => simple::decode(stream(streams, "main")?),
        Encoding::Ascii => ascii::decode(stream(streams, "main")?),
        Encoding::HatfNaive | Encoding::HatfBest => {
            native_events::read_events(stream(streams, "main")?).map_err(|e| e.to_string())
        }
        Encoding::Split => split::decode(streams),
        Encoding::Hatf10Dtd => crate::formats::hatf10_dtd::decode(stream(streams, "main")?),
        Encoding::HatfSplitAddr => {
            let reader = NativeReader::with_split_addresses(
                stream(streams, "main")?,
                Box::new(stream(streams, "addresses")?),
            );
            native_events::collect_events(reader).map_err(|e| e.to_string())
        }
    }
}
