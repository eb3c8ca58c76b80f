//! The typed and universal codecs with the model engine (predictors chosen per block) on the
//! real traces of tools hatf has no front end for (`../shared/corpus/foreign/`, README there):
//! Valgrind lackey and heaptrack raw. Their record text form is made by the corpus's own
//! `to_records.py` and parsed by the library before anything is timed; the groups are skipped,
//! with a message, when the corpus or `python3` is absent.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use criterion::{black_box, Criterion, Throughput};
use metatf::typed::{Format, TypedReader};
use metatf::{Codec, DynRecord, MetaTf, UniversalReader, Value};

use super::{typed_read, typed_write, universal_read, universal_write};

/// Valgrind lackey `--trace-mem=yes`, laid out as the corpus's `lackey.dtd`.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(section = 1, name = "mem", format = "lackey", model = "auto")]
pub enum Lackey {
    #[metatf(tag = 4)]
    Instr { addr: u64, size: u8 },
    #[metatf(tag = 5)]
    Load { addr: u64, size: u8 },
    #[metatf(tag = 6)]
    Store { addr: u64, size: u8 },
    #[metatf(tag = 7)]
    Modify { addr: u64, size: u8 },
    #[metatf(tag = 8)]
    Other { vfield: Vec<u8> },
}

/// heaptrack `--raw`, laid out as the corpus's `heaptrack.dtd`.
#[derive(MetaTf, Debug, Clone, PartialEq)]
#[metatf(section = 1, name = "heap", format = "heaptrack", model = "auto")]
pub enum Heaptrack {
    #[metatf(tag = 4)]
    Alloc {
        #[metatf(width = 4)]
        size: u64,
        #[metatf(width = 4)]
        trace: u64,
        ptr: u64,
    },
    #[metatf(tag = 5)]
    Free { ptr: u64 },
    #[metatf(tag = 6)]
    Node {
        ip: u64,
        #[metatf(width = 4)]
        parent: u64,
    },
    #[metatf(tag = 7)]
    Other { vfield: Vec<u8> },
}

/// The record's integers, and its byte string if any.
fn parts(r: &DynRecord) -> (Vec<u64>, Vec<u8>) {
    let mut ints = Vec::new();
    let mut bytes = Vec::new();
    for f in &r.fields {
        match f {
            Value::Uint(v) => ints.push(*v),
            Value::Bytes(b) => bytes.clone_from(b),
            Value::List(_) => {}
        }
    }
    (ints, bytes)
}

fn lackey(r: &DynRecord) -> Option<Lackey> {
    let (v, bytes) = parts(r);
    let access = |i: usize| Some((*v.get(i)?, u8::try_from(*v.get(i + 1)?).ok()?));
    Some(match r.name.as_str() {
        "instr" => access(0).map(|(addr, size)| Lackey::Instr { addr, size })?,
        "load" => access(0).map(|(addr, size)| Lackey::Load { addr, size })?,
        "store" => access(0).map(|(addr, size)| Lackey::Store { addr, size })?,
        "modify" => access(0).map(|(addr, size)| Lackey::Modify { addr, size })?,
        "other" => Lackey::Other { vfield: bytes },
        _ => return None,
    })
}

fn heaptrack(r: &DynRecord) -> Option<Heaptrack> {
    let (v, bytes) = parts(r);
    Some(match (r.name.as_str(), v.as_slice()) {
        ("alloc", &[size, trace, ptr]) => Heaptrack::Alloc { size, trace, ptr },
        ("free", &[ptr]) => Heaptrack::Free { ptr },
        ("node", &[ip, parent]) => Heaptrack::Node { ip, parent },
        ("other", _) => Heaptrack::Other { vfield: bytes },
        _ => return None,
    })
}

/// The corpus's `foreign/` directory: under `HATF_CORPUS` when it is set (as for the scripts),
/// else beside the repository.
fn foreign_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("HATF_CORPUS") {
        Some(corpus) => PathBuf::from(corpus).join("foreign"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/foreign"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping the foreign traces: {} is absent", dir.display());
        None
    }
}

/// The trace's records: its text decompressed, turned into the record text form by the
/// corpus's converter, and parsed with its DTD by the library.
fn records(dir: &Path, trace: &str, kind: &str, dtd: &str) -> Option<Vec<DynRecord>> {
    let compressed = std::fs::read(dir.join(trace)).ok()?;
    let text = zstd::decode_all(&compressed[..]).ok()?;
    let mut child = Command::new("python3")
        .arg(dir.join("to_records.py"))
        .arg(kind)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| eprintln!("skipping {trace}: python3 cannot run to_records.py: {e}"))
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let feeder = std::thread::spawn(move || stdin.write_all(&text));
    let output = child.wait_with_output().ok()?;
    feeder.join().ok()?.ok()?;
    let dtd_text = std::fs::read_to_string(dir.join(dtd)).ok()?;
    let mut container = Vec::new();
    metatf::encode_text(
        &dtd_text,
        dtd,
        &output.stdout[..],
        &mut container,
        Codec::None,
        0,
    )
    .map_err(|e| eprintln!("skipping {trace}: {e}"))
    .ok()?;
    let mut r = UniversalReader::new(&container[..]).ok()?;
    let mut out = Vec::new();
    while let Some(x) = r.next_record().ok()? {
        if x.name != "section" {
            out.push(x);
        }
    }
    Some(out)
}

/// The trace's records, typed and dynamic, and the file both writers write from them.
pub struct Trace<F> {
    typed: Vec<F>,
    dynamic: Vec<DynRecord>,
    bytes: Vec<u8>,
}

fn load<F: Format + PartialEq + std::fmt::Debug>(
    trace: &str,
    kind: &str,
    dtd: &str,
    convert: fn(&DynRecord) -> Option<F>,
) -> Option<Trace<F>> {
    let dir = foreign_dir()?;
    let dynamic = records(&dir, trace, kind, dtd)?;
    let typed = dynamic
        .iter()
        .map(convert)
        .collect::<Option<Vec<F>>>()
        .or_else(|| {
            eprintln!("skipping {trace}: a record does not fit the bench's format");
            None
        })?;
    let bytes = typed_write(&typed);
    assert!(
        bytes == universal_write::<F>(&dynamic),
        "{trace}: both codecs write the same bytes"
    );
    let back: Vec<F> = TypedReader::<F, _>::new(&bytes[..])
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("read back");
    assert!(
        back == typed,
        "{trace}: the typed reader gives the records back"
    );
    eprintln!(
        "{trace}: {} records, {} bytes with the model engine",
        typed.len(),
        bytes.len()
    );
    Some(Trace {
        typed,
        dynamic,
        bytes,
    })
}

fn groups<F: Format>(c: &mut Criterion, name: &str, t: &Trace<F>) {
    let n = t.typed.len() as u64;
    let mut g = c.benchmark_group(format!("model-write-{name}"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    g.bench_function("typed", |b| b.iter(|| typed_write(black_box(&t.typed))));
    g.bench_function("universal", |b| {
        b.iter(|| universal_write::<F>(black_box(&t.dynamic)))
    });
    g.finish();
    let mut g = c.benchmark_group(format!("model-read-{name}"));
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    g.bench_function("typed", |b| b.iter(|| typed_read::<F>(&t.bytes)));
    g.bench_function("universal", |b| b.iter(|| universal_read(&t.bytes)));
    g.finish();
}

/// Lackey's own text (`I  0401ab70,3`, ` S 1fff0005e8,8`) from its records, spelled as fast as
/// this bench knows how: two decimal digits a table lookup, no decoding, into memory. Any
/// decoder that rebuilds the text from records pays at least this, where `xz -d` copies the
/// text's long repeats instead (docs/PERFORMANCE.md §4 sets the two side by side).
fn spell_lackey(records: &[Lackey], out: &mut Vec<u8>) {
    const PAIRS: &[u8; 200] = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839\
404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    fn decimal(out: &mut Vec<u8>, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        while v >= 100 {
            let pair = (v % 100) as usize * 2;
            v /= 100;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if v >= 10 {
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[v as usize * 2..v as usize * 2 + 2]);
        } else {
            at -= 1;
            digits[at] = b'0' + v as u8;
        }
        out.extend_from_slice(&digits[at..]);
    }
    fn access(out: &mut Vec<u8>, kind: &[u8; 3], addr: u64, size: u8) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        out.extend_from_slice(kind);
        // At least eight hexadecimal digits, more where the address needs them.
        let digits = (16 - addr.leading_zeros() as usize / 4).max(8);
        for k in (0..digits).rev() {
            out.push(HEX[(addr >> (4 * k)) as usize & 15]);
        }
        out.push(b',');
        decimal(out, u64::from(size));
        out.push(b'\n');
    }
    out.clear();
    for r in records {
        match *r {
            Lackey::Instr { addr, size } => access(out, b"I  ", addr, size),
            Lackey::Load { addr, size } => access(out, b" L ", addr, size),
            Lackey::Store { addr, size } => access(out, b" S ", addr, size),
            Lackey::Modify { addr, size } => access(out, b" M ", addr, size),
            Lackey::Other { ref vfield } => {
                out.extend_from_slice(vfield);
                out.push(b'\n');
            }
        }
    }
}

/// The `print-floor` group: [`spell_lackey`] over the whole trace.
fn print_floor(c: &mut Criterion, t: &Trace<Lackey>) {
    let mut text = Vec::new();
    spell_lackey(&t.typed, &mut text);
    if let Some(original) = foreign_dir()
        .and_then(|dir| std::fs::read(dir.join("lackey-python-json.txt.zst")).ok())
        .and_then(|compressed| zstd::decode_all(&compressed[..]).ok())
    {
        assert!(text == original, "the floor spells lackey's text exactly");
    }
    eprintln!(
        "lackey: {} records spell {} bytes of text",
        t.typed.len(),
        text.len()
    );
    let mut g = c.benchmark_group("print-floor");
    g.sample_size(10);
    g.throughput(Throughput::Elements(t.typed.len() as u64));
    g.bench_function("lackey-text", |b| {
        b.iter(|| spell_lackey(black_box(&t.typed), &mut text))
    });
    g.finish();
}

/// The `model-write-*` and `model-read-*` groups of both traces, and `print-floor` of lackey.
pub fn bench(c: &mut Criterion) {
    if let Some(t) = load("lackey-python-json.txt.zst", "lackey", "lackey.dtd", lackey) {
        groups(c, "lackey", &t);
        print_floor(c, &t);
    }
    if let Some(t) = load(
        "heaptrack-perl-hash.raw.zst",
        "heaptrack",
        "heaptrack.dtd",
        heaptrack,
    ) {
        groups(c, "heaptrack", &t);
    }
}

/// One operation once on one trace, for `perf` (`METATF_PROFILE=model-<op>-<trace>`, op one
/// of `write-typed`, `write-universal`, `read-typed`, `read-universal`; and
/// `model-print-floor-lackey`, [`spell_lackey`] five times).
pub fn profile(mode: &str) -> bool {
    let Some(rest) = mode.strip_prefix("model-") else {
        return false;
    };
    fn run<F: Format>(op: &str, t: &Trace<F>) {
        timed(op, || match op {
            "write-typed" => drop(black_box(typed_write(&t.typed))),
            "write-universal" => drop(black_box(universal_write::<F>(&t.dynamic))),
            "read-typed" => drop(black_box(typed_read::<F>(&t.bytes))),
            "read-universal" => drop(black_box(universal_read(&t.bytes))),
            other => panic!("unknown operation {other}"),
        });
    }
    if let Some(op) = rest.strip_suffix("-lackey") {
        if let Some(t) = load("lackey-python-json.txt.zst", "lackey", "lackey.dtd", lackey) {
            if op == "print-floor" {
                // Five rounds: the least is the floor, the spread shows the machine's load.
                let mut text = Vec::new();
                for _ in 0..5 {
                    timed(op, || spell_lackey(black_box(&t.typed), &mut text));
                }
            } else {
                run(op, &t);
            }
        }
    } else if let Some(op) = rest.strip_suffix("-heaptrack") {
        if let Some(t) = load(
            "heaptrack-perl-hash.raw.zst",
            "heaptrack",
            "heaptrack.dtd",
            heaptrack,
        ) {
            run(op, &t);
        }
    } else {
        panic!("unknown METATF_PROFILE mode {mode}");
    }
    true
}

/// CPU seconds the calling thread has run, from Linux's `/proc/thread-self/schedstat` (its
/// first field, in nanoseconds); `None` elsewhere. Why CPU time: the machines these run on are
/// shared, and wall time then measures the other jobs as much as the operation.
/// Runs `work` once and prints its wall and CPU time (this thread's).
fn timed(op: &str, work: impl FnOnce()) {
    let started = std::time::Instant::now();
    let cpu = cpu_seconds();
    work();
    let cpu = cpu_seconds().zip(cpu).map(|(after, before)| after - before);
    eprintln!(
        "{op}: {:?} wall, {} s CPU",
        started.elapsed(),
        cpu.map_or("?".to_string(), |c| format!("{c:.3}"))
    );
}

fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}
