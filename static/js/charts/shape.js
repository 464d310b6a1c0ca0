// charts/shape.js: data shaping for the charts (pure: no DOM; unit-tested
// with node --test in static/jstest).

// Binary search: first index i with a[i] >= v.
export function lowerBound(a, v) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// uPlot's own gap finder assumes every series has a value at every x. Here
// a series is `undefined` where it has no point, so an explicit null gap
// runs from this series' previous real point to its next one.
export function alignedGaps(u, si, idx0, idx1, nullGaps) {
  if (!nullGaps || !nullGaps.length) return nullGaps;
  const xs = u.data[0];
  const ys = u.data[si];
  const left = u.bbox.left;
  const right = u.bbox.left + u.bbox.width;
  const px = (x) => Math.round(u.valToPos(x, "x", true));
  const out = [];
  let lastNum = -1;
  let i = idx0;
  while (i <= idx1) {
    const v = ys[i];
    if (v === null) {
      let j = i + 1;
      while (j <= idx1 && ys[j] == null) j++;
      const fr = lastNum >= 0 ? px(xs[lastNum]) : left;
      const to = j <= idx1 ? px(xs[j]) : right;
      if (to > fr) out.push([fr, to]);
      i = j;
      continue;
    }
    if (v != null) lastNum = i;
    i++;
  }
  return out;
}

// Merge per-entry [x, y] lists onto one sorted x array (undefined where an
// entry has no point, which uPlot spans over).
export function alignXY(lists) {
  const all = [];
  for (const pts of lists) for (const p of pts) all.push(p[0]);
  all.sort((a, b) => a - b);
  const xs = [];
  for (const x of all) if (!xs.length || xs[xs.length - 1] !== x) xs.push(x);
  const ys = lists.map((pts) => {
    const y = new Array(xs.length).fill(undefined);
    for (const [x, v] of pts) y[lowerBound(xs, x)] = v;
    return y;
  });
  return [xs, ...ys];
}

// busiest picks the names of the n entries with the largest maxima
// ([max, name] pairs; ties go to the smaller name), sorted by name: the
// ports a chart shows until the student picks others.
export function busiest(entries, n) {
  const sorted = entries.slice().sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1));
  return sorted.slice(0, n).map((e) => e[1]).sort();
}
