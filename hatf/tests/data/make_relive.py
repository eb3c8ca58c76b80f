"""Writes relive.mtrace and relive_memory_replay.txt: 300 synthetic allocation lines whose
addresses come from a narrow range, so many allocations land on a still-live address (lost
frees)."""
import random

r = random.Random(7)
live = []
mt = ["= Start"]
mr = []
for i in range(300):
    if r.random() < 0.45 or not live:
        a = 0x55550000 + 16 * r.randrange(0, 64)
        s = r.choice([16, 24, 32, 100, 4096])
        site = r.choice(["./prog:[0x401000]", "/lib/libc.so.6:(malloc+0x10)[0x7f0001]"])
        mt.append(f"@ {site} + {a:#x} {s:#x}")
        mr.append(f"{r.choice([100, 101])}: malloc {a:#x} {s}")
        live.append(a)
    else:
        a = live.pop(r.randrange(len(live)))
        mt.append(f"@ ./prog:[0x401200] - {a:#x}")
        mr.append(f"{r.choice([100, 101])}: free {a:#x}")
mt.append("= End")
open("relive.mtrace", "w").write("\n".join(mt) + "\n")
open("relive_memory_replay.txt", "w").write("\n".join(mr) + "\n")
