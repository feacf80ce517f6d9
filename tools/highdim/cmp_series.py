import csv, sys, json
# Compares two run series CSVs (unlearn run --out) value by value:
#   python3 cmp_series.py before.series.csv after.series.csv
# For each column it prints the number of bit-identical values (same
# shortest round-trip text), the largest absolute difference and the largest
# difference relative to the value itself (|a-b|/max(|a|,|b|)).
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
assert len(a) == len(b)
cols = ["E_w","E_Z","E_Theta","D_upd","M_direct"]
for c in cols:
    mabs = 0; mrel = 0; same = 0; n = 0
    for x, y in zip(a, b):
        assert x["method"] == y["method"] and x["k"] == y["k"]
        if x[c] == "" and y[c] == "": same += 1; n += 1; continue
        u, v = float(x[c]), float(y[c]); n += 1
        if x[c] == y[c]: same += 1
        d = abs(u - v); mabs = max(mabs, d)
        if max(abs(u),abs(v)) > 0: mrel = max(mrel, d / max(abs(u),abs(v)))
    print(f"{c}: {n} values, {same} identical, max abs diff {mabs:.3g}, max rel diff (to the value) {mrel:.3g}")
