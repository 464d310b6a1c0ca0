// vocabulary.js: the results' vocabulary as the server defines it (GET
// /api/vocabulary): every series' unit and entity, and the flow-size
// buckets. Loaded once per page; the scripts hold no copy of it.
import { api } from "./common.js";
import { unitOf } from "./charts/index.js";

const vocab = await api("GET", "/api/vocabulary");
const byName = new Map((vocab.metrics || []).map((m) => [m.name, m]));

// unit is a series' formatter unit ("bytes", "bps", "ns" or "").
export function unit(metric) {
  const m = byName.get(metric);
  return m ? unitOf(m.unit) : "";
}

// help is a series' description ("" for an unknown one).
export function help(metric) {
  const m = byName.get(metric);
  return m ? m.help || "" : "";
}

// isPortMetric says whether a series is per port (else per flow).
export function isPortMetric(metric) {
  const m = byName.get(metric);
  return !!m && m.entity === "port";
}

// sizeLabels are the labels of the FCT-slowdown size buckets, in order.
export function sizeLabels() {
  return (vocab.sizeBuckets || []).map((b) => b.label);
}

// sizeBuckets are the FCT-slowdown size buckets: [{lo_bytes, hi_bytes, label}].
export function sizeBuckets() {
  return (vocab.sizeBuckets || []).slice();
}
