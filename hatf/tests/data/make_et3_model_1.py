"""Writes et3-model-1.trace, a synthetic ET3 trace (every record kind, several threads, deaths,
reused ids, a comment, blank and respelled lines, a last line without its newline).
et3-model-1.hatf is this text encoded by an encoder of layout et-model-1 at zstd level 19; tests/et_fixture.rs checks that it still decodes, and that
`--level 19` still writes it byte for byte. Run: python3 make_et3_model_1.py"""
import random

r = random.Random(20261123)
threads = [1496724653, 2018699554, 7]
live, known = [], []
lines = ["# synthetic ET3 trace for the et-model-1 fixture (written for hatf's tests)"]
t, time = threads[0], 0
stack = {th: [] for th in threads}
for i in range(1500):
    if r.random() < 0.05:
        t = r.choice(threads)
    x = r.random()
    if x < 0.12 or not known:
        obj = r.randrange(1, 2**31)
        if r.random() < 0.02 and known:
            obj = r.choice(known)  # ids are identity hash codes: not unique
        kind = "N" if r.random() < 0.8 else "A"
        size = r.choice([16, 24, 32, 40, r.randrange(16, 4096)])
        length = 0 if kind == "N" else r.randrange(0, 100)
        lines.append(f"{kind} {obj} {size} {r.randrange(1, 60)} {r.randrange(1, 40)} {length} {t}")
        live.append(obj)
        known.append(obj)
    elif x < 0.20 and live:
        obj = live.pop(0 if r.random() < 0.7 else r.randrange(len(live)))
        time += r.randrange(0, 5)
        if r.random() < 0.5:
            lines.append(f"D {obj} {t} {time}")
        else:
            lines.append(f"D {obj} {t} {time} {r.choice([16, 24, 32])}")
    elif x < 0.40:
        h = r.choice(known[-40:]) if r.random() < 0.8 else r.choice(known)
        v = 0 if r.random() < 0.2 else (r.choice(known[-50:]) if r.random() < 0.7 else r.choice(known))
        lines.append(f"U {h} {v} {r.randrange(1, 30)} {t}")
    elif x < 0.62:
        m = r.randrange(1, 200)
        recv = 0 if r.random() < 0.3 else (r.choice(known[-20:]) if r.random() < 0.8 else r.choice(known))
        lines.append(f"M {m} {recv} {t}")
        stack[t].append(m)
    elif x < 0.82:
        if stack[t] and r.random() < 0.9:
            m = stack[t].pop() if r.random() < 0.9 else stack[t][0]
        else:
            m = r.randrange(1, 200)
        lines.append(f"E {m} {t}")
    elif x < 0.98:
        o = r.choice(known[-30:]) if r.random() < 0.8 else r.choice(known)
        lines.append(f"W {o} {r.randrange(1, 80)} {t}")
    else:
        lines.append(f"{r.choice('THX')} {r.randrange(1, 200)} {r.choice(known)} {r.choice(known)} {t}")
    if r.random() < 0.005:
        lines.append("")
    if r.random() < 0.005:
        lines.append(f"E  12 {t}")
with open("et3-model-1.trace", "w") as f:
    f.write("\n".join(lines) + "\nE 5 7")
