# Reference values for stats/*_test.go, computed with SciPy (Debian's python3-scipy 1.10.1).
# Run: /usr/bin/python3 stats/testdata/reference.py   The tests record its output as constants.
import numpy as np
from scipy import stats

print("# t quantiles: stats.t.ppf(p, df)")
for p, df in [(0.975, 1), (0.975, 2), (0.975, 3), (0.975, 4), (0.975, 9), (0.975, 29), (0.975, 1000), (0.995, 5), (0.6, 7)]:
    print(p, df, repr(stats.t.ppf(p, df)))
print("# t cdf: stats.t.cdf(t, df)")
for t, df in [(0.0, 3), (1.0, 1), (-2.5, 4), (3.2, 12), (10.0, 2)]:
    print(t, df, repr(stats.t.cdf(t, df)))

print("# summary: np.mean, np.std(ddof=1), stats.t.interval(0.95, n-1, loc=mean, scale=stats.sem(x))")
for x in [[96.89, 96.85, 96.93, 96.87], [90.1, 91.3], [88.0, 88.0, 88.0]]:
    x = np.array(x)
    print(list(x), repr(x.mean()), repr(x.std(ddof=1)), [repr(v) for v in stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))])

print("# wilson: stats.binomtest(k, n).proportion_ci(0.95, method='wilson')")
for k, n in [(9053, 10000), (7, 10), (0, 10), (10, 10), (1, 1)]:
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    print(k, n, repr(ci.low), repr(ci.high))

print("# sign flip: stats.permutation_test((d,), np.mean, permutation_type='samples', n_resamples=np.inf).pvalue")
for d in [[0.12, 0.31, -0.05, 0.22], [0.4, 0.6, 0.5, 0.3, 0.45, 0.55], [1.0, 1.0, -1.0, 1.0], [0.2, -0.2]]:
    r = stats.permutation_test((np.array(d),), np.mean, permutation_type="samples", n_resamples=np.inf, vectorized=False)
    print(d, repr(r.pvalue))

print("# signed rank, no ties: stats.wilcoxon(d, method='exact').pvalue")
d = [1.5, -0.4, 2.1, 0.9, 3.3, -1.2, 0.7, 2.8]
print(d, repr(stats.wilcoxon(d, method="exact").pvalue))

print("# signed rank, ties and zeros: zeros dropped, then")
print("# stats.permutation_test((nz,), lambda x: stats.rankdata(np.abs(x))[x > 0].sum(), permutation_type='samples', n_resamples=np.inf).pvalue")
d = np.array([0.5, 0.5, -0.5, 1.0, 0.0, 2.0, 2.0, -1.0, 0.5, 3.0, 0.0])
nz = d[d != 0]
r = stats.permutation_test((nz,), lambda x: stats.rankdata(np.abs(x))[x > 0].sum(), permutation_type="samples", n_resamples=np.inf, vectorized=False)
print(list(d), repr(r.pvalue))

print("# signed rank, 300 pairs with ties and zeros: d[i] = ((37*i) % 11 - 4) * 0.25;")
print("# stats.wilcoxon(d, zero_method='wilcox', correction=False, method='approx').pvalue")
d = np.array([((37 * i) % 11 - 4) * 0.25 for i in range(300)])
print(repr(stats.wilcoxon(d, zero_method="wilcox", correction=False, method="approx").pvalue))
