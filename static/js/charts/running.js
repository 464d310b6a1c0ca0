// charts/running.js: a bounded reservoir with quantiles (pure; unit-tested
// with node --test in static/jstest).

// Bounded uniform reservoir (Algorithm R). running([v...]) seeds it;
// running(n) with a number sets the capacity (default 4096).
export function running(values, capacity) {
  let cap = 4096;
  if (typeof values === "number") {
    cap = values;
    values = null;
  } else if (typeof capacity === "number") cap = capacity;
  cap = Math.max(1, Math.floor(cap) || 4096);
  const buf = [];
  let n = 0;
  let sorted = null;
  function add(v) {
    v = Number(v);
    if (!Number.isFinite(v)) return;
    n++;
    if (buf.length < cap) buf.push(v);
    else {
      const j = Math.floor(Math.random() * n);
      if (j < cap) buf[j] = v;
    }
    sorted = null;
  }
  function quantile(q) {
    if (!buf.length) return null;
    if (!sorted) sorted = buf.slice().sort((a, b) => a - b);
    const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
    return sorted[k];
  }
  if (values && typeof values[Symbol.iterator] === "function") for (const v of values) add(v);
  return {
    add,
    p50: () => quantile(0.5),
    p99: () => quantile(0.99),
    quantile,
    count: () => n,
    clear() {
      buf.length = 0;
      n = 0;
      sorted = null;
    },
  };
}
