package repro

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
)

// SVG geometry: a 720×400 canvas, the plot inside margins.
const (
	svgW, svgH                  = 720, 400
	padL, padR, padT, padBottom = 70, 150, 40, 50
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// maxPoints is how many points a line keeps in an SVG (evenly decimated).
const maxPoints = 2000

// SVG draws the figure as a standalone SVG document.
func (f Figure) SVG() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n",
		svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgW, svgH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", padL, esc(f.Title))
	x0, x1, y0, y1 := f.bounds()
	pw, ph := float64(svgW-padL-padR), float64(svgH-padT-padBottom)
	sy := func(v float64) float64 {
		if f.LogY {
			v = math.Log10(math.Max(v, y0))
			return float64(svgH-padBottom) - (v-math.Log10(y0))/(math.Log10(y1)-math.Log10(y0))*ph
		}
		return float64(svgH-padBottom) - (v-y0)/(y1-y0)*ph
	}
	sx := func(v float64) float64 { return float64(padL) + (v-x0)/(x1-x0)*pw }
	// axes and ticks
	fmt.Fprintf(&b, `<path d="M%d %d V%d H%d" stroke="black" fill="none"/>`+"\n", padL, padT, svgH-padBottom, svgW-padR)
	for _, t := range yTicks(y0, y1, f.LogY) {
		y := sy(t)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			padL, svgW-padR, y, y, padL-6, y+4, tickLabel(t))
	}
	if f.Bars {
		for i, l := range f.Labels {
			x := sx(float64(i) + 0.5)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, svgH-padBottom+16, esc(l))
		}
	} else {
		for _, t := range niceTicks(x0, x1) {
			x := sx(t)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n",
				x, x, svgH-padBottom, svgH-padBottom+4, x, svgH-padBottom+18, tickLabel(t))
		}
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", float64(padL)+pw/2, svgH-12, esc(f.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", float64(padT)+ph/2, esc(f.YLabel))
	// data
	n := len(f.Lines)
	for li, l := range f.Lines {
		color := palette[li%len(palette)]
		if f.Bars {
			w := 0.8 / float64(max(n, 1))
			for i := range l.X {
				left := sx(l.X[i] + 0.1 + w*float64(li))
				top := sy(l.Y[i])
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`+"\n",
					left, top, sx(l.X[i]+0.1+w*float64(li+1))-left-1, math.Max(0, float64(svgH-padBottom)-top), color,
					esc(l.Name), tickLabel(l.Y[i]))
			}
		} else if len(l.X) > 0 {
			var d bytes.Buffer
			step := max(1, len(l.X)/maxPoints)
			for i := 0; i < len(l.X); i += step {
				cmd := "L"
				if i == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&d, "%s%.1f %.1f", cmd, sx(l.X[i]), sy(l.Y[i]))
			}
			fmt.Fprintf(&b, `<path d="%s" stroke="%s" fill="none" stroke-width="1.5"/>`+"\n", d.String(), color)
		}
		ly := padT + 10 + 18*li
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			svgW-padR+12, ly-10, color, svgW-padR+30, ly, esc(l.Name))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// bounds is the data range, padded, with y from 0 unless logarithmic.
func (f Figure) bounds() (x0, x1, y0, y1 float64) {
	x0, x1 = math.Inf(1), math.Inf(-1)
	y0, y1 = math.Inf(1), math.Inf(-1)
	for _, l := range f.Lines {
		for i := range l.X {
			if math.IsNaN(l.Y[i]) || math.IsInf(l.Y[i], 0) {
				continue
			}
			x0, x1 = math.Min(x0, l.X[i]), math.Max(x1, l.X[i])
			y0, y1 = math.Min(y0, l.Y[i]), math.Max(y1, l.Y[i])
		}
	}
	if f.Bars {
		x0, x1 = 0, float64(max(len(f.Labels), 1))
	}
	if math.IsInf(x0, 0) {
		x0, x1, y0, y1 = 0, 1, 0, 1
	}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if f.LogY {
		pos := math.Inf(1)
		for _, l := range f.Lines {
			for _, v := range l.Y {
				if v > 0 {
					pos = math.Min(pos, v)
				}
			}
		}
		if math.IsInf(pos, 0) {
			pos = 1
		}
		y0 = math.Pow(10, math.Floor(math.Log10(pos)))
		y1 = math.Pow(10, math.Ceil(math.Log10(math.Max(y1, y0*10))))
		return x0, x1, y0, y1
	}
	y0 = math.Min(0, y0)
	if y1 <= y0 {
		y1 = y0 + 1
	}
	y1 += (y1 - y0) * 0.05
	return x0, x1, y0, y1
}

// niceTicks are about five round values covering [lo, hi].
func niceTicks(lo, hi float64) []float64 {
	span := hi - lo
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 6 {
			step *= m
			break
		}
	}
	var out []float64
	first := math.Ceil(lo / step)
	for i := 0.0; (first+i)*step <= hi+step*1e-9; i++ {
		out = append(out, (first+i)*step)
	}
	return out
}

func yTicks(lo, hi float64, log bool) []float64 {
	if !log {
		return niceTicks(lo, hi)
	}
	var out []float64
	for t := lo; t <= hi*1.0001; t *= 10 {
		out = append(out, t)
	}
	return out
}

func tickLabel(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	switch {
	case a >= 1e7 || a < 1e-3:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 1e4:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

func esc(s string) string { return html.EscapeString(s) }
