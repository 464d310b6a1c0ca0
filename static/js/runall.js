// runall.js: what "run this scenario with every algorithm" starts, a pure
// module (no DOM, no fetch) so node can test it.

// runAllPlan lists the algorithms to start next to an original run: every
// registered algorithm but the original's own (the original run, with its
// parameters and preset, is one of the compared runs); each one starts
// with its defaults. Without an original, every algorithm.
export function runAllPlan(algorithms, original) {
  const names = algorithms.map((a) => (typeof a === "string" ? a : a.name));
  if (!original) return names;
  return names.filter((n) => n !== original);
}

// compareOrder puts the original run first among the ids to compare.
export function compareOrder(originalId, started) {
  const rest = started.filter((id) => id !== originalId);
  return originalId ? [originalId, ...rest] : rest;
}
