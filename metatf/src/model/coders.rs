//! The adaptive models of a modelled block and how each item is coded with them: the tag
//! (predicted from the previous records), a scalar (the index of the first predictor that
//! hits, then a rank or a residual), a byte string (order-1 bytes) and a metadata record.
//! Encoding and decoding are written side by side so that they stay mirror images.

use super::choice::Choice;
use super::engine::Engine;
use super::numbers::{unzigzag, zigzag, NumberModel, SmallModel};
use super::predict::{Kind, Spec};
use super::range::{Decoder, Encoder};

/// Bits of the tag predictor tables.
const TAG_TABLE_BITS: u32 = 16;
/// Tags below this are coded as one symbol; larger ones escape to a number.
const TAG_SYMBOLS: u64 = 255;

/// The models of one stream.
struct StreamModels {
    primary: usize,
    list: Vec<usize>,
    kinds: Vec<Kind>,
    /// Hit-index models by the previous two indices of the stream.
    index: Vec<SmallModel>,
    /// Rank or residual models by hit index (the last one: residual of a miss).
    numbers: Vec<NumberModel>,
    primary_zero: bool,
    prev: usize,
}

/// Every adaptive model of a block.
pub(crate) struct Models {
    streams: Vec<StreamModels>,
    tag_tables: [Vec<u64>; 2],
    recent_tags: [u64; 4],
    tag_hit: Vec<SmallModel>,
    tag_prev_hit: usize,
    tag_symbols: Vec<SmallModel>,
    tag_escape: NumberModel,
    bytes: Vec<SmallModel>,
    prev_byte: usize,
    meta: Vec<NumberModel>,
}

fn tag_slot(h: u64) -> usize {
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TAG_TABLE_BITS)) as usize
}

impl Models {
    /// Models for `choices`, creating the chosen predictors in `engine`.
    pub(crate) fn new(choices: &[Choice], engine: &mut Engine) -> Models {
        let streams = choices
            .iter()
            .enumerate()
            .map(|(s, c)| {
                let primary = engine.instance(s, c.primary);
                let list: Vec<usize> = c.list.iter().map(|&p| engine.instance(s, p)).collect();
                let kinds = c.list.iter().map(|p: &Spec| p.kind).collect();
                StreamModels {
                    primary,
                    kinds,
                    index: vec![SmallModel::new(3); 64],
                    numbers: vec![NumberModel::default(); list.len() + 1],
                    list,
                    primary_zero: c.primary.kind == Kind::Zero,
                    prev: 0,
                }
            })
            .collect();
        Models {
            streams,
            tag_tables: [vec![0; 1 << TAG_TABLE_BITS], vec![0; 1 << TAG_TABLE_BITS]],
            recent_tags: [0; 4],
            tag_hit: vec![SmallModel::new(2); 64],
            tag_prev_hit: 0,
            tag_symbols: vec![SmallModel::new(8); 256],
            tag_escape: NumberModel::default(),
            bytes: vec![SmallModel::new(8); 256],
            prev_byte: 0,
            meta: vec![NumberModel::default(); 9],
        }
    }

    fn tag_keys(&self, first: u64) -> [usize; 2] {
        let t = self.recent_tags;
        [
            tag_slot(t[0] ^ first.rotate_left(17)),
            tag_slot(t[0] ^ t[1].rotate_left(8) ^ t[2].rotate_left(16) ^ t[3].rotate_left(24)),
        ]
    }

    fn tag_context(&self) -> usize {
        (self.recent_tags[0].min(15) as usize) * 4 + self.tag_prev_hit
    }

    /// After a record: remember its tag under the keys of the records before it.
    pub(crate) fn end_record(&mut self, tag: u64, first: u64, last_first: &mut u64) {
        let keys = self.tag_keys(*last_first);
        self.tag_tables[0][keys[0]] = tag;
        self.tag_tables[1][keys[1]] = tag;
        self.recent_tags.copy_within(0..3, 1);
        self.recent_tags[0] = tag;
        *last_first = first;
    }

    pub(crate) fn encode_tag(&mut self, e: &mut Encoder, tag: u64, last_first: u64) {
        let keys = self.tag_keys(last_first);
        let guesses = [self.tag_tables[0][keys[0]], self.tag_tables[1][keys[1]]];
        let hit = if guesses[0] == tag {
            0
        } else if guesses[1] == tag {
            1
        } else {
            2
        };
        let ctx = self.tag_context();
        self.tag_hit[ctx].encode(e, hit);
        self.tag_prev_hit = hit as usize;
        if hit == 2 {
            let ctx = self.recent_tags[0].min(255) as usize;
            self.tag_symbols[ctx].encode(e, tag.min(TAG_SYMBOLS) as u32);
            if tag >= TAG_SYMBOLS {
                self.tag_escape.encode(e, tag - TAG_SYMBOLS);
            }
        }
    }

    pub(crate) fn decode_tag(&mut self, d: &mut Decoder<'_>, last_first: u64) -> u64 {
        let keys = self.tag_keys(last_first);
        let ctx = self.tag_context();
        let hit = self.tag_hit[ctx].decode(d).min(2);
        self.tag_prev_hit = hit as usize;
        match hit {
            0 => self.tag_tables[0][keys[0]],
            1 => self.tag_tables[1][keys[1]],
            _ => {
                let ctx = self.recent_tags[0].min(255) as usize;
                let t = u64::from(self.tag_symbols[ctx].decode(d));
                if t >= TAG_SYMBOLS {
                    TAG_SYMBOLS.saturating_add(self.tag_escape.decode(d))
                } else {
                    t
                }
            }
        }
    }

    pub(crate) fn encode_scalar(&mut self, e: &mut Encoder, engine: &mut Engine, s: usize, v: u64) {
        let m = &mut self.streams[s];
        let mut hit = m.list.len();
        let mut rank = 0;
        for (k, &i) in m.list.iter().enumerate() {
            let p = &engine.predictors[i];
            if m.kinds[k].is_rank() {
                if let Some(r) = p.rank_of(v) {
                    hit = k;
                    rank = r;
                    break;
                }
            } else if p.predict(&engine.history) == v {
                hit = k;
                break;
            }
        }
        m.index[m.prev].encode(e, hit as u32);
        m.prev = (m.prev * 8 + hit) & 63;
        if hit < m.list.len() {
            if m.kinds[hit].is_rank() {
                m.numbers[hit].encode(e, rank);
            }
        } else {
            let p = engine.predictors[m.primary].predict(&engine.history);
            let r = if m.primary_zero {
                v
            } else {
                zigzag(v.wrapping_sub(p))
            };
            m.numbers[hit].encode(e, r);
        }
        engine.observe(s, v);
    }

    pub(crate) fn decode_scalar(
        &mut self,
        d: &mut Decoder<'_>,
        engine: &mut Engine,
        s: usize,
    ) -> Result<u64, String> {
        let m = &mut self.streams[s];
        let hit = m.index[m.prev].decode(d) as usize;
        if hit > m.list.len() {
            return Err(format!("predictor index {hit} of {}", m.list.len()));
        }
        m.prev = (m.prev * 8 + hit) & 63;
        let v = if hit < m.list.len() {
            let p = &engine.predictors[m.list[hit]];
            if m.kinds[hit].is_rank() {
                let rank = m.numbers[hit].decode(d);
                p.at_rank(rank)
                    .ok_or_else(|| format!("rank {rank} beyond the list"))?
            } else {
                p.predict(&engine.history)
            }
        } else {
            let r = m.numbers[hit].decode(d);
            if m.primary_zero {
                r
            } else {
                let p = engine.predictors[m.primary].predict(&engine.history);
                p.wrapping_add(unzigzag(r))
            }
        };
        engine.observe(s, v);
        Ok(v)
    }

    pub(crate) fn encode_bytes(&mut self, e: &mut Encoder, bytes: &[u8]) {
        for &b in bytes {
            self.bytes[self.prev_byte].encode(e, u32::from(b));
            self.prev_byte = usize::from(b);
        }
    }

    pub(crate) fn decode_bytes(&mut self, d: &mut Decoder<'_>, out: &mut Vec<u8>, len: u64) {
        for _ in 0..len {
            let b = self.bytes[self.prev_byte].decode(d) as u8;
            out.push(b);
            self.prev_byte = usize::from(b);
        }
    }

    /// Metadata field `i`, or with `i == None` the field count.
    pub(crate) fn encode_meta(&mut self, e: &mut Encoder, i: Option<u64>, v: u64) {
        self.meta[i.map_or(8, |i| i.min(7) as usize)].encode(e, v);
    }

    pub(crate) fn decode_meta(&mut self, d: &mut Decoder<'_>, i: Option<u64>) -> u64 {
        self.meta[i.map_or(8, |i| i.min(7) as usize)].decode(d)
    }
}
