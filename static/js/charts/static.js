// charts/static.js: the shell of set-once charts (toolbar, PNG, resize).

import { baseFontPx, downloadPng, h, legendA11y, needUPlot, observeSize, wireLegendKeys } from "./dom.js";

// Shared shell: toolbar with a PNG button, a host, resize, rebuild on set().
export function staticShell(el, o, build) {
  const uPlot = needUPlot();
  el.classList.add("chart");
  const title = o.title || "";
  const host = h("div", { class: "chart-plot" });
  let u = null;
  let lastList = [];
  const pngBtn = h("button", { type: "button", class: "btn small chart-png", title: "Download this chart as a PNG image" }, "PNG");
  if (o.toolbar !== false) el.append(h("div", { class: "toolbar chart-toolbar", role: "toolbar", "aria-label": (title || "Chart") + " controls" }, pngBtn));
  el.append(host);
  let fontPx = baseFontPx(el);
  const height = Math.max(120, Number(o.height) || 260);

  function width() {
    return Math.max(240, Math.floor(host.clientWidth || el.clientWidth || 640));
  }

  function set(list) {
    lastList = Array.isArray(list) ? list : [];
    const { opts, data } = build(lastList, fontPx);
    opts.width = width();
    opts.height = height;
    opts.title = title || undefined;
    opts.hooks = Object.assign({}, opts.hooks, {
      setSeries: [(uu) => legendA11y(uu)],
      ready: [(uu) => { legendA11y(uu); wireLegendKeys(uu); }],
    });
    if (u) u.destroy();
    u = new uPlot(opts, data, host);
    let n = 0;
    for (let s = 1; s < data.length; s++) for (const v of data[s]) if (v != null) n++;
    el.dataset.points = String(n);
  }

  const ro = observeSize(el, host, fontPx, (w, f) => {
    if (f !== fontPx) {
      fontPx = f;
      set(lastList);
    } else if (u && w !== u.width) u.setSize({ width: w, height });
  });
  pngBtn.addEventListener("click", () => api.png());

  const api = {
    el,
    set,
    get uplot() {
      return u;
    },
    png: (filename) => (u ? downloadPng(u, title, filename, fontPx) : Promise.reject(new Error("CCCharts: nothing to export"))),
    destroy() {
      if (ro) ro.disconnect();
      if (u) u.destroy();
      u = null;
      el.replaceChildren();
    },
  };
  set([]);
  return api;
}
