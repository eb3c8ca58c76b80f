"""Writes the synthetic archives of tests/archive_layouts.rs (seeded, so the same bytes each
run with the same Python): a malloc-bench Tracefile protobuf of 3,000 lines, gzip'd, and a
memory_replay text of 3,000 lines in a zip. Not corpus files. Its protobuf helpers also
serve scripts/hostile_cases.py, which imports this file."""
import gzip, io, random, zipfile


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    return bytes([num << 3 | 2]) + varint(len(payload)) + payload


def main():
    random.seed(8)
    text = bytearray()
    live = []
    nid = 1
    for i in range(3000):
        if live and random.random() < 0.45:
            j = live.pop(random.randrange(len(live)) if random.random() < 0.3 else -1)
            text += field(1, field(2, b"\x08" + varint(j)))
        else:
            size = random.choice([16, 24, 32, 48, 64, 128, 4096, random.randrange(1, 5000)])
            text += field(1, field(1, b"\x08" + varint(nid) + b"\x10" + varint(size)))
            live.append(nid)
            nid += 1
    text += b"\x10" + varint(len(live) + 50)
    open("synthetic.trace.gz", "wb").write(gzip.compress(bytes(text), compresslevel=6, mtime=0))

    lines = []
    live = []
    addr = 0x7F0000001000
    for i in range(3000):
        tid = 100 + i % 3
        if live and random.random() < 0.45:
            a = live.pop(random.randrange(len(live)))
            lines.append(f"{tid}: free 0x{a:x}\n")
        else:
            addr += random.choice([16, 32, 48, 64, 4096])
            live.append(addr)
            lines.append(f"{tid}: malloc 0x{addr:x} {random.choice([8, 16, 24, 100, 4000])}\n")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        zi = zipfile.ZipInfo("synthetic.txt", date_time=(2026, 11, 23, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, "".join(lines))
    open("synthetic_memory_replay.zip", "wb").write(buf.getvalue())


if __name__ == "__main__":
    main()
