#!/usr/bin/env python3
"""An independent, plain-Python implementation of docs/spec.md §2, §3, §5 and §8.

It shares no code with the Go toolkit: it reads a stream file (spec §1.1) and
a run record written by `unlearn run --out`, rebuilds every state of the run
from the spec's definitions alone (o-LBFGS with the two-loop recursion, the
deletion set of the deterministic modes, the nine operators, the
deletion-edited counterfactual, the metrics with the run's probe vectors,
computed literally), and compares its per-step series
with the CSV written by `unlearn run --out` beside the record (or by
`--series-csv`).

The probe vectors are the record's config.probe_vectors (given probes) or
"probes" (records of format unlearn-run/v1); a record of seeded probes stores
only their generator, seed and m_q (probe_spec), and Go's normal sampler is not
Python's, so pass the vectors drawn by align.SeededProbes with --probes FILE
(a JSON array of vectors). Only the random draw comes from Go; every metric is
computed here.

Exit status 0 when every value agrees within
|ours − theirs| ≤ tol · max(1, ‖w⁻_k‖), 1 otherwise.

Usage: specref.py STREAM RECORD SERIES_CSV [--tol 1e-9] [--probes FILE]
Plain Python (no numpy), so keep runs small: it is a check, not a tool.
"""
import csv
import json
import math
import sys


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def norm(a):
    return math.sqrt(dot(a, a))


class Loss:
    def __init__(self, header):
        self.kind, self.d = header["kind"], header["d"]
        if self.kind == "quadratic":
            self.h0, self.h1 = header["H0"], header["H1"]
        else:
            self.lam = header["lambda"]

    def grad(self, w, z):
        v, s = z
        if self.kind == "quadratic":  # H(α)(w − a)
            r = [wi - ai for wi, ai in zip(w, v)]
            return [(1 - s) * dot(self.h0[i], r) + s * dot(self.h1[i], r) for i in range(self.d)]
        m = dot(v, w)  # −y·x·σ(−y xᵀw) + λw
        zz = -s * m
        sig = 1 / (1 + math.exp(-zz)) if zz >= 0 else math.exp(zz) / (1 + math.exp(zz))
        return [-s * xi * sig + self.lam * wi for xi, wi in zip(v, w)]


class State:
    """θ = (w, Z) with pair sources and the deleted ids (spec §2)."""

    def __init__(self, d, tau, eta, gamma0, tol):
        self.d, self.tau, self.eta, self.gamma0, self.tol = d, tau, eta, gamma0, tol
        self.w = [0.0] * d
        self.pairs = []  # (s, y, source), oldest first
        self.deleted = set()

    def copy(self):
        c = State(self.d, self.tau, self.eta, self.gamma0, self.tol)
        c.w = list(self.w)
        c.pairs = [(list(s), list(y), set(src)) for s, y, src in self.pairs]
        c.deleted = set(self.deleted)
        return c

    def apply(self, q):
        """H_Z q: Nocedal & Wright Alg. 7.4, γ = sᵀy/yᵀy of the newest pair."""
        r, alphas = list(q), []
        for s, y, _ in reversed(self.pairs):
            a = dot(s, r) / dot(s, y)
            alphas.append(a)
            r = [ri - a * yi for ri, yi in zip(r, y)]
        alphas.reverse()
        if self.pairs:
            s, y, _ = self.pairs[-1]
            gamma = dot(s, y) / dot(y, y)
        else:
            gamma = self.gamma0
        r = [gamma * ri for ri in r]
        for (s, y, _), a in zip(self.pairs, alphas):
            b = dot(y, r) / dot(s, y)
            r = [ri + (a - b) * si for ri, si in zip(r, s)]
        return r

    def step(self, loss, ev):
        op, eid, z = ev
        if op == "delete":
            self.deleted.add(eid)
            return
        g = loss.grad(self.w, z)
        p = [-x for x in self.apply(g)]
        wn = [wi + self.eta * pi for wi, pi in zip(self.w, p)]
        s = [a - b for a, b in zip(wn, self.w)]
        y = [a - b for a, b in zip(loss.grad(wn, z), g)]
        if dot(s, y) > self.tol * norm(s) * norm(y):
            self.pairs.append((s, y, {eid}))
            if len(self.pairs) > self.tau:
                self.pairs.pop(0)
        self.w = wn

    def direction(self, loss, z):
        return [-x for x in self.apply(loss.grad(self.w, z))]


def read_stream(path):
    with open(path) as f:
        header = json.loads(f.readline())
        events = []
        for line in f:
            e = json.loads(line)
            if e["op"] == "insert":
                v = e["a"] if "a" in e else e["x"]
                sc = e["alpha"] if "alpha" in e else e["y"]
                events.append(("insert", e["id"], (v, float(sc))))
            else:
                events.append(("delete", e["id"], None))
    return header, events


def replay(new, loss, events, skip=frozenset()):
    st = new()
    for ev in events:
        if ev[1] not in skip:
            st.step(loss, ev)
    return st


def operators(new, loss, prefix, U, tau):
    """The nine operators of spec §5 with the conventions of spec §8."""
    actual = replay(new, loss, prefix)
    out = {}
    out["oracle"] = replay(new, loss, prefix, U)
    out["noop"] = actual.copy()
    st = actual.copy()
    samples = {e[1]: e[2] for e in prefix if e[0] == "insert"}
    acc = [0.0] * st.d
    for u in sorted(U):
        acc = [a + h for a, h in zip(acc, st.apply(loss.grad(st.w, samples[u])))]
    st.w = [wi + st.eta * ai for wi, ai in zip(st.w, acc)]
    out["param-only"] = st
    st = actual.copy()
    st.pairs = [p for p in st.pairs if not (p[2] & U)]
    out["pair-drop"] = st
    st = actual.copy()
    st.pairs = []
    out["memory-reset"] = st
    st = actual.copy()
    last = [e for e in prefix if e[0] == "insert"][-tau:] if tau > 0 else []
    for e in last:
        if e[1] not in U:
            st.step(loss, e)
    out["retain-ft"] = st
    st = actual.copy()
    st.w, st.pairs = [0.0] * st.d, []
    out["drop-refill"] = st
    for key, W in (("window-tau", tau), ("window-5tau", 5 * tau)):
        start = max(0, len(prefix) - W)
        st = replay(new, loss, prefix[:start])
        st.deleted |= U
        for e in prefix[start:]:
            if e[1] in U or (e[0] == "insert" and e[1] in st.deleted):
                continue
            st.step(loss, e)
        out[key] = st
    for st in out.values():
        st.deleted |= U
    return out


def check_deletion_set(new, loss, prefix, cfg, U):
    """Recomputes U for the deterministic modes of spec §4 (recent, old,
    high-gradient) and returns the number of mismatches (0 or 1). The random
    mode depends on the toolkit's seeded generator and is not re-drawn."""
    mode, count = cfg.get("mode"), cfg.get("count", 5)
    realized = {e[1] for e in prefix if e[0] == "delete"}
    cands = [e for e in prefix if e[0] == "insert" and e[1] not in realized]
    if mode == "recent":
        chosen = [e[1] for e in cands[-count:]]
    elif mode == "old":
        chosen = [e[1] for e in cands[:count]]
    elif mode == "high-gradient":
        w = replay(new, loss, prefix).w
        ranked = sorted(cands, key=lambda e: (-norm(loss.grad(w, e[2])), e[1]))
        chosen = [e[1] for e in ranked[:count]]
    else:
        return 0
    want = set(chosen) | realized
    if want != U:
        print(f"deletion set: ours {sorted(want)} vs toolkit {sorted(U)}")
        return 1
    return 0


def cosine_error(a, b):
    na, nb = norm(a), norm(b)
    if na == 0 and nb == 0:
        return 0.0
    if na == 0 or nb == 0:
        return 1.0
    return 1 - dot(a, b) / (na * nb)


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    tol = float(argv[argv.index("--tol") + 1]) if "--tol" in argv else 1e-9
    header, events = read_stream(argv[1])
    rec = json.load(open(argv[2]))
    cfg, lc = rec["config"], rec["learner"]
    loss = Loss(header)
    tdel, H, tau = cfg["t_del"], cfg["horizon"], lc["tau"]
    lamz = cfg.get("lambda_z", 1.0)
    U = set(rec["U"])
    if "--probes" in argv:
        probes = json.load(open(argv[argv.index("--probes") + 1]))
    elif rec.get("probes"):
        probes = rec["probes"]
    elif rec["config"].get("probe_vectors"):
        probes = rec["config"]["probe_vectors"]
    else:
        print("the record stores its probes by seed (probe_spec); pass --probes FILE")
        return 2
    if len(probes) != (rec["probe_spec"]["count"] if "probe_spec" in rec else len(probes)):
        print("--probes holds %d vectors, the record's probe_spec.count is %d" % (len(probes), rec["probe_spec"]["count"]))
        return 2

    def new():
        return State(loss.d, tau, lc["eta"], lc["gamma0"], lc["curvature_tol"])

    prefix, future = events[:tdel], events[tdel:]
    bad = check_deletion_set(new, loss, prefix, cfg, U)
    states = operators(new, loss, prefix, U, tau)
    ref = replay(new, loss, prefix, U)
    ours = {m: [] for m in states}
    for k in range(H + 1):
        nxt = next((e[2] for e in future[k:] if e[0] == "insert"), None)
        ref_hq = [ref.apply(q) for q in probes]
        ref_dir = ref.direction(loss, nxt) if nxt is not None else None
        wn = norm(ref.w)
        for m, st in states.items():
            ew = norm([a - b for a, b in zip(st.w, ref.w)])
            ez = math.sqrt(sum(norm([a - b for a, b in zip(st.apply(q), rq)]) ** 2
                               for q, rq in zip(probes, ref_hq)) / len(probes))
            dupd = cosine_error(st.direction(loss, nxt), ref_dir) if nxt is not None else None
            mdir = sum(1 for p in st.pairs if p[2] & U)
            ours[m].append((ew, ez, ew + lamz * ez, dupd, mdir, wn))
        if k == H:
            break
        ev = future[k]
        for st in [ref] + list(states.values()):
            if ev[0] == "delete" and ev[1] in st.deleted:
                continue
            st.step(loss, ev)

    worst = 0.0
    seen = set()
    with open(argv[3]) as f:
        for row in csv.DictReader(f):
            m, k = row["method"], int(row["k"])
            seen.add((m, k))
            ew, ez, eth, dupd, mdir, wn = ours[m][k]
            scale = max(1.0, wn)
            pairs = [("E_w", ew, row["E_w"]), ("E_Z", ez, row["E_Z"]), ("E_Theta", eth, row["E_Theta"])]
            # An undefined D_upd is NaN in the CSV (spec §8); definedness
            # must agree too.
            undefined = row["D_upd"] in ("", "NaN")
            if (dupd is None) != undefined:
                bad += 1
                print(f"{m} k={k} D_upd: ours {dupd!r} vs toolkit {row['D_upd']!r} (defined in one only)")
            elif dupd is not None:
                pairs.append(("D_upd", dupd, row["D_upd"]))
            for name, a, b in pairs:
                diff = abs(a - float(b)) / scale
                worst = max(worst, diff)
                if not diff <= tol:  # a NaN difference is a mismatch too
                    bad += 1
                    if bad <= 10:
                        print(f"{m} k={k} {name}: ours {a!r} vs toolkit {b}")
            if int(row["M_direct"]) != mdir:
                bad += 1
                print(f"{m} k={k} M_direct: ours {mdir} vs toolkit {row['M_direct']}")
    missing = [(m, k) for m in ours for k in range(H + 1) if (m, k) not in seen]
    if missing:
        bad += len(missing)
        print(f"{len(missing)} (method, k) rows missing from the series CSV, first {missing[0]}")
    print(f"U {sorted(U)} (mode {cfg.get('mode')}), methods {len(ours)}, steps {H + 1}, "
          f"worst scaled difference {worst:.3g}, mismatches {bad}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
