# Seeded generator of issue #12's high-dimensional case: 300 logistic inserts
# at d = 1e5 with 20 non-zeros per row (Gaussian values at 20 distinct random
# coordinates, labels from the sign along a fixed Gaussian direction), in the
# stream format's sparse payloads (docs/spec.md). Writes sparse-d1e5.jsonl
# (182 KB) in the current directory:
#   python3 tools/highdim/sparse_d1e5.py
import json, random
rng = random.Random(12)
d, n, nnz = 100000, 300, 20
wdir = [rng.gauss(0, 1) for _ in range(d)]
with open("sparse-d1e5.jsonl", "w") as f:
    f.write(json.dumps({"format": "olbfgs-stream/v1", "kind": "logistic", "d": d, "lambda": 0.05}) + "\n")
    for i in range(1, n + 1):
        idx = sorted(rng.sample(range(d), nnz))
        val = [rng.gauss(0, 1) for _ in idx]
        m = sum(wdir[k] * v for k, v in zip(idx, val))
        y = 1 if m >= 0 else -1
        f.write(json.dumps({"op": "insert", "id": i, "x": val, "x_index": idx, "y": y}) + "\n")
