// Package static holds the lab's browser assets, embedded in the binary.
//
// FS holds vendor/ (uPlot, htmx), css/ and js/ with their paths kept, e.g.
// "vendor/uplot/uPlot.iife.min.js", "css/app.css", "js/charts/index.js".
// The all: prefix keeps files whose names start with "." or "_" too.
// chart-demo.html, README.md, package.json and jstest/ (the scripts' unit
// tests, run with node --test) are not embedded.
package static

import "embed"

//go:embed all:vendor all:css all:js
var FS embed.FS
