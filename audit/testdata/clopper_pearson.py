#!/usr/bin/env python3
"""Reference values of the one-sided Clopper-Pearson upper bound.

For k successes in n trials and level a, the upper bound is the p in (0, 1)
with P[Bin(n, p) <= k] = a (Clopper & Pearson 1934). This script finds it
with mpmath 1.3.0 at 60 significant digits: the binomial CDF is the exact
finite sum of C(n, i) p^i (1 - p)^(n - i), i = 0..k (by the ratio of
successive terms), and p is bisected to
50 digits (the CDF decreases strictly in p). It shares nothing with the Go
code, which uses gonum's incomplete beta function and math/big with
directed rounding.

Output (audit/testdata/clopper_pearson.txt): one line per case,
"k n a p" with p printed to 30 significant digits.

    python3 audit/testdata/clopper_pearson.py > audit/testdata/clopper_pearson.txt
"""
import mpmath as mp

mp.mp.dps = 60


def cdf(k, n, p):
    # t_0 = (1 - p)^n, t_(i+1) = t_i (n - i)/(i + 1) p/(1 - p): the terms
    # C(n, i) p^i (1 - p)^(n - i), summed exactly at the working precision.
    q = 1 - p
    t = q**n
    s = t
    r = p / q
    for i in range(k):
        t = t * (n - i) / (i + 1) * r
        s += t
    return s


def upper(k, n, a):
    if k == n:
        return mp.mpf(1)
    lo, hi = mp.mpf(0), mp.mpf(1)
    for _ in range(200):
        mid = (lo + hi) / 2
        if cdf(k, n, mid) > a:
            lo = mid
        else:
            hi = mid
        if hi - lo < mp.mpf(10) ** -50 * hi:
            break
    return hi


# The levels are float64 values (exactly, as Go reads them): γ/4 for the
# audit's default γ = 1e-5, γ/4 for γ = 0.05, and a large one.
levels = [2.5e-6, 0.0125, 0.25]
cases = [(k, n) for n in (1, 2, 10, 100, 5000, 20000, 30000) for k in (0, 1, 3, 6, 50, 500) if k <= n]
cases += [(5000, 10000), (9999, 10000), (2999, 3000), (30000, 30000)]
print("# k n a p: one-sided Clopper-Pearson upper bounds, mpmath %s at %d digits (audit/testdata/clopper_pearson.py)" % (mp.__version__, mp.mp.dps))
for a in levels:
    for k, n in cases:
        print(k, n, repr(a), mp.nstr(upper(k, n, mp.mpf(a)), 30))
