// exercise-lock.js: which editor fields a pinned exercise locks (pure, for
// classview-lab.js and node --test).

// isLocked reports whether a scenario field path is a locked path or lies
// under one (topology locks topology.hostLink.rate; workload locks
// workload[0].size).
export function isLocked(locked, path) {
  if (!path) return false;
  return locked.some((l) => path === l || path.startsWith(l + ".") || path.startsWith(l + "["));
}
