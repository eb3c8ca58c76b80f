#!/usr/bin/env python3
"""Builds the crafted inputs of docs/ROBUSTNESS.md ("Crafted cases, measured") in a scratch
directory and runs the release binary on each under /usr/bin/time, printing one table row per
run: case, command, exit status, peak resident memory, wall-clock time, first line of stderr.

    cargo build --release -p hatf-cli
    scripts/hostile_cases.py [--hatf target/release/hatf] [--corpus ../shared/corpus] [--big]

--big adds the cases that write or read gigabytes (the 1 GiB zip bombs and long lines).
Needs python3, zstd and GNU time. Scratch files go to a temporary directory, removed at the end.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The protobuf varint writer of the synthetic test archives' generator (no bytecode cache
# left beside it in the tree).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "hatf", "tests", "data"))
from make_synthetic import varint  # noqa: E402


def read_varint(b, at):
    v, shift = 0, 0
    while True:
        x = b[at]
        at += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return v, at


def crc(b):
    return zlib.crc32(b) & 0xFFFFFFFF


def le32(v):
    return v.to_bytes(4, "little")


def take_apart(data):
    """A one-block container: header bytes, record count, sections (as
    hatf-cli/tests/impossible_files.rs frames them)."""
    body, at = read_varint(data, 8)
    header_end = at + body + 4
    assert data[header_end:header_end + 4] == b"MTFB"
    at = header_end + 4
    _, at = read_varint(data, at)
    _, at = read_varint(data, at)
    records, at = read_varint(data, at)
    n, at = read_varint(data, at)
    sections = []
    for _ in range(n):
        number, width, codec = data[at], data[at + 1], data[at + 2]
        at += 3
        length, at = read_varint(data, at)
        if codec == 0:
            stored_len, stored_crc = length, 0
        else:
            stored_len, at = read_varint(data, at)
            stored_crc = int.from_bytes(data[at:at + 4], "little")
            at += 4
        c = int.from_bytes(data[at:at + 4], "little")
        at += 4
        sections.append(dict(number=number, width=width, codec=codec, len=length,
                             stored_crc=stored_crc, crc=c, stored_len=stored_len))
    at += 4
    for s in sections:
        s["stored"] = data[at:at + s["stored_len"]]
        at += s["stored_len"]
    return dict(header=data[:header_end], records=records, sections=sections)


def put_together(p):
    out = bytearray(p["header"])
    block_at = len(out)
    block = bytearray(b"MTFB")
    for v in (0, 0, p["records"], len(p["sections"])):
        block += varint(v)
    for s in p["sections"]:
        block += bytes([s["number"], s["width"], s["codec"]]) + varint(s["len"])
        if s["codec"] != 0:
            block += varint(len(s["stored"])) + le32(s["stored_crc"])
        block += le32(s["crc"])
    block += le32(crc(bytes(block)))
    for s in p["sections"]:
        block += s["stored"]
    out += block
    index_at = len(out)
    index = bytearray(b"MTFI") + varint(1) + varint(block_at) + varint(p["records"])
    index += le32(crc(bytes(index)))
    out += index
    trailer = index_at.to_bytes(8, "little")
    out += trailer + le32(crc(trailer)) + b"MTFE"
    return bytes(out)


def zstd(data):
    return subprocess.run(["zstd", "-q", "-c", "-19"], input=data, check=True,
                          capture_output=True).stdout


def unzstd(data):
    return subprocess.run(["zstd", "-q", "-d", "-c"], input=data, check=True,
                          capture_output=True).stdout


def zero_section(number, size):
    """A zstd section of `size` zero bytes (a few kilobytes stored), valid checksums."""
    frame = subprocess.run(f"head -c {size} /dev/zero | zstd -q -c -19", shell=True,
                           check=True, capture_output=True).stdout
    c = 0
    chunk = bytes(1 << 24)
    left = size
    while left:
        n = min(left, len(chunk))
        c = zlib.crc32(chunk[:n], c)
        left -= n
    return dict(number=number, width=1, codec=2, len=size, stored_crc=crc(frame),
                crc=c & 0xFFFFFFFF, stored=frame)


class Runner:
    def __init__(self, hatf, work):
        self.hatf, self.work = hatf, work
        self.rows = []

    def run(self, case, args, stdin=None, label=None, timeout=600):
        out = os.path.join(self.work, "out")
        for f in os.listdir(self.work):
            if f.startswith("out"):
                os.remove(os.path.join(self.work, f))
        cmd = ["/usr/bin/time", "-f", "TIME %e %M", self.hatf] + args
        started = time.time()
        try:
            p = subprocess.run(cmd, stdin=stdin or subprocess.DEVNULL, capture_output=True,
                               timeout=timeout, cwd=self.work)
            err = p.stderr.decode(errors="replace").splitlines()
            stats = [l for l in err if l.startswith("TIME ")]
            secs, kb = (stats[-1].split()[1:3] if stats else ("?", "0"))
            said = [l for l in err if not l.startswith("TIME ") and l.strip()]
            code = p.returncode
        except subprocess.TimeoutExpired:
            secs, kb, said, code = f">{timeout}", "0", ["(timed out)"], "killed"
        del started
        first = said[0] if said else ""
        if len(first) > 110:
            first = first[:110] + "…"
        self.row(case, label or " ".join(args), code, f"{int(kb) / 1024:.0f} MB", f"{secs} s",
                 first)
        return out

    def row(self, *cells):
        line = "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
        self.rows.append(line)
        print(line, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hatf", default=os.path.join(ROOT, "target/release/hatf"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "../shared/corpus"))
    ap.add_argument("--big", action="store_true")
    a = ap.parse_args()
    hatf = os.path.abspath(a.hatf)
    work = tempfile.mkdtemp(prefix="hatf-hostile-")
    r = Runner(hatf, work)
    print("| case | command | exit | peak RSS | time | message |")
    print("|---|---|---:|---:|---:|---|")
    try:
        cases(r, work, hatf, os.path.abspath(a.corpus), a.big)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def path(work, name, data):
    p = os.path.join(work, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def cases(r, work, hatf, corpus, big):
    sample = os.path.join(ROOT, "samples/sample.mtrace")
    subprocess.run([hatf, "encode", sample, "-o", os.path.join(work, "sample.hatf"), "-f"],
                   check=True, capture_output=True)
    parts = take_apart(open(os.path.join(work, "sample.hatf"), "rb").read())

    # 1. Section bombs: one, then four, zstd sections of 1 GiB of zeros.
    for count in (1, 4):
        p = dict(parts, sections=[zero_section(s["number"], 1 << 30)
                                  for s in parts["sections"][:count]]
                 + parts["sections"][count:])
        f = path(work, f"bomb{count}.hatf", put_together(p))
        size = os.path.getsize(f) // 1024
        for cmd in ("inspect", "verify", "decode", "stats", "recover"):
            args = [cmd, f] + (["-o", "out", "-f"] if cmd in ("decode", "recover") else [])
            r.run(f"1. {count} × 1 GiB zstd section, {size} KB", args, label=cmd)

    # 7. A block claiming 2^60 records; a DTD reference of 2^60 bytes.
    f = path(work, "claims.hatf", put_together(dict(parts, records=1 << 60)))
    for cmd in ("verify", "recover"):
        args = [cmd, f] + (["-o", "out", "-f"] if cmd == "recover" else [])
        r.run("7. block claiming 2^60 records", args, label=cmd)

    # 2. Reconstruction data changed, checksums recomputed: byte 13 of section 1 of
    # systemui.zip encoded, xor 0x55.
    zipped = os.path.join(corpus, "malloc/android/systemui.zip")
    if os.path.exists(zipped):
        enc = os.path.join(work, "systemui.hatf")
        subprocess.run([hatf, "encode", zipped, "-o", enc, "-f"], check=True,
                       capture_output=True)
        r.run("2. systemui.zip encoded, unchanged", ["decode", enc, "-o", "out", "-f"],
              label="decode")
        p = take_apart(open(enc, "rb").read())
        for s in p["sections"]:
            if s["number"] == 1:
                raw = bytearray(unzstd(s["stored"]) if s["codec"] == 2 else s["stored"])
                raw[13] ^= 0x55
                s["stored"] = zstd(bytes(raw)) if s["codec"] == 2 else bytes(raw)
                s["len"], s["crc"] = len(raw), crc(bytes(raw))
                s["stored_crc"] = crc(s["stored"])
        f = path(work, "recon.hatf", put_together(p))
        r.run("2. its section 1 byte 13 xor 0x55, reframed", ["decode", f, "-o", "out", "-f"],
              label="decode")
    else:
        print(f"(no corpus at {corpus}: case 2 skipped)", file=sys.stderr)

    # 4. Zip bombs: valid lines, then zeros, in one deflated entry.
    lines = []
    if os.path.exists(zipped):
        with zipfile.ZipFile(zipped) as z:
            with z.open(z.namelist()[0]) as e:
                lines = [e.readline() for _ in range(500)]
    jvm = [b"VS:100\n", b"VI:105\n", b"CL:106:Main\n"] + [
        b"MN:%d:1:Main:step:0\n" % (110 + k) for k in range(497)]
    zeros = (1 << 30) if big else (64 << 20)
    for name, text, member, frm in (("memory_replay", lines, None, []),
                                    ("jvm", jvm, "trace", ["--from", "jvm-zip"])):
        if not text:
            continue
        f = os.path.join(work, f"{name}_bomb.zip")
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            with z.open(member or "dump.txt", "w", force_zip64=True) as e:
                e.write(b"".join(text))
                chunk = bytes(1 << 24)
                for _ in range(zeros // len(chunk)):
                    e.write(chunk)
        case = (f"4. {name} zip: 500 lines, {zeros >> 20} MiB of zeros, "
                f"{os.path.getsize(f) // 1024} KB")
        r.run(case, ["encode", f, "-o", "out.hatf", "-f"] + frm, label="encode")
        r.run(case, ["stats", f] + frm, label="stats")

    # 5. Long lines: one of 256 MiB (1 GiB with --big); no line end at all.
    n = (1 << 30) if big else (256 << 20)
    f = os.path.join(work, "long.mtrace")
    with open(f, "wb") as out:
        out.write(b"= Start\n")
        chunk = b"x" * (1 << 24)
        for _ in range(n // len(chunk)):
            out.write(chunk)
        out.write(b"\n")
    r.run(f"5. mtrace, one {n >> 20} MiB line", ["encode", "--from", "mtrace", f, "-o",
                                                 "out.hatf", "-f"], label="encode (strict)")
    r.run(f"5. wee_alloc, one {n >> 20} MiB line",
          ["encode", "--from", "wee-alloc", "--keep-bad-lines", f, "-o", "out.hatf", "-f"],
          label="encode --keep-bad-lines")
    os.remove(f)
    r.run("5. /dev/zero", ["encode", "--from", "mtrace", "/dev/zero", "-o", "out.hatf", "-f"],
          label="encode --from mtrace /dev/zero")

    # 6. Strict mode and an unparseable last line without a newline.
    f = path(work, "junk.mtrace", b"= Start\n@ ./a:[0x4] + 0x10 0x20\nJUNK")
    r.run("6. last line `JUNK` without `\\n`", ["encode", f, "-o", "out.hatf", "-f"],
          label="encode")

    # 8. Signals: SIGTERM and SIGINT to an encode reading an endless stream; SIGKILL, then
    # the next run into the folder.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        d = tempfile.mkdtemp(dir=work)
        feeder = subprocess.Popen(
            ["sh", "-c", "yes '@ ./a:[0x4] + 0x10 0x20' | head -c 2000000000"],
            stdout=subprocess.PIPE)
        started = time.time()
        p = subprocess.Popen([hatf, "encode", "--from", "mtrace", "-", "-o", "out.hatf"],
                             stdin=feeder.stdout, cwd=d, stderr=subprocess.PIPE)
        time.sleep(2)
        p.send_signal(sig)
        p.wait()
        feeder.kill()
        feeder.wait()
        left = [x for x in os.listdir(d) if "partial" in x]
        after = ""
        if sig == signal.SIGKILL:
            subprocess.run([hatf, "encode", sample, "-o", "again.hatf"], cwd=d,
                           capture_output=True)
            after = f"; after the next encode into the folder: " \
                    f"{len([x for x in os.listdir(d) if 'partial' in x])}"
        r.row(f"8. {signal.Signals(sig).name} to an encode after 2 s", "encode -", p.returncode,
              "", f"{time.time() - started:.1f} s",
              f"partial files left: {len(left)}{after}; out.hatf exists: "
              f"{os.path.exists(os.path.join(d, 'out.hatf'))}")
        shutil.rmtree(d, ignore_errors=True)

    # 9. DTD compiler.
    rep = ("x.width = 1; x.interpretation = none;\nsection s 1 { r : (tag, %s) "
           "{ tag.value = 4; } }\n" % ", ".join(["x"] * 8192))
    f = path(work, "rep.dtd", rep.encode())
    r.run("9. one field repeated 8,192 times", ["dtd", "compile", f, "-o", "out.rs"],
          label="dtd compile")
    g = "x.width = 1; x.interpretation = none;\ng0 : (x, x)\n" + "".join(
        f"g{i} : (g{i - 1}, g{i - 1})\n" for i in range(1, 13)) + \
        "section s 1 { r : (tag, g12) { tag.value = 4; } }\n"
    f = path(work, "groups.dtd", g.encode())
    r.run(f"9. 2^13 nested groups, {len(g)} bytes", ["dtd", "compile", f, "-o", "out.rs"],
          label="dtd compile")
    chain = "x.width = 1; x.interpretation = none;\ng0 : (x)\n" + "".join(
        f"g{i} : (g{i - 1})\n" for i in range(1, 100_000)) + \
        "section s 1 { r : (tag, g99999) { tag.value = 4; } }\n"
    f = path(work, "chain.dtd", chain.encode())
    p = subprocess.run([hatf, "dtd", "check", f], capture_output=True)
    r.run("9. 100,000-deep group chain", ["dtd", "check", f], label="dtd check")
    r.row("9. (its errors)", "dtd check", p.returncode, "", "",
          f"{len(p.stderr)} bytes on stderr")

    # 10. A full disk: standard output is /dev/full.
    with open("/dev/full", "wb") as full:
        p = subprocess.run([hatf, "encode", sample, "-o", "-"], stdout=full,
                           capture_output=False, stderr=subprocess.PIPE)
    said = p.stderr.decode(errors="replace").strip().splitlines()
    r.row("10. output to a full device (/dev/full)", "encode -o -", p.returncode, "", "",
          said[0] if said else "")


if __name__ == "__main__":
    main()
