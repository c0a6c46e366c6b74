'use strict';
// Summary statistics of latency samples. Percentiles use the nearest-rank method on the sorted
// samples, so p99 of fewer than 100 samples is the largest one (the report prints n beside it).

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    min: sorted.length ? sorted[0] : NaN,
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

function median(values) {
  return percentile([...values].sort((a, b) => a - b), 0.5);
}

module.exports = { percentile, summarize, median };
