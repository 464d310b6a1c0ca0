package server

import (
	"math"
	"strconv"

	"cclab/server/runs"
)

// appendNumbers appends a JSON array of numbers; NaN and ±Inf (which JSON
// cannot carry, and which would fail a whole response or frame) become null.
// It is what the chart data and the stream spend their time on, so it
// avoids encoding/json's reflection.
func appendNumbers(b []byte, vs []float64) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNumber(b, v)
	}
	return append(b, ']')
}

// appendNumber appends one JSON number (null for NaN and ±Inf).
func appendNumber(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return append(b, "null"...)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendString appends a JSON string (series names are ASCII port names,
// flow ids and metric names; anything else is escaped).
func appendString(b []byte, s string) []byte {
	return strconv.AppendQuote(b, s)
}

// appendChart appends a JSON array of chart series.
func appendChart(b []byte, series []chartSeries) []byte {
	b = append(b, '[')
	for i, c := range series {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, `{"i":`...)
		b = strconv.AppendInt(b, int64(c.I), 10)
		b = append(b, `,"metric":`...)
		b = appendString(b, c.Metric)
		b = append(b, `,"entity":`...)
		b = appendString(b, c.Entity)
		b = append(b, `,"t":`...)
		b = appendNumbers(b, c.T)
		b = append(b, `,"v":`...)
		b = appendNumbers(b, c.V)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendSamples appends a "samples" stream message.
func appendSamples(b []byte, m *runs.Samples) []byte {
	b = append(b, `{"type":"samples","keys":[`...)
	for i, k := range m.Keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"i":`...)
		b = strconv.AppendInt(b, int64(k.Index), 10)
		b = append(b, `,"metric":`...)
		b = appendString(b, k.Metric)
		b = append(b, `,"entity":`...)
		b = appendString(b, k.Entity)
		b = append(b, '}')
	}
	b = append(b, `],"series":[`...)
	for i, d := range m.Series {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"i":`...)
		b = strconv.AppendInt(b, int64(d.I), 10)
		b = append(b, `,"t":`...)
		b = appendNumbers(b, d.T)
		b = append(b, `,"v":`...)
		b = appendNumbers(b, d.V)
		b = append(b, '}')
	}
	b = append(b, `],"points":`...)
	b = strconv.AppendInt(b, int64(m.Points), 10)
	return append(b, '}')
}

// jsonNum is a float64 that encodes NaN and ±Inf as null (a learning
// curve's losses can be either).
type jsonNum float64

// MarshalJSON implements json.Marshaler.
func (v jsonNum) MarshalJSON() ([]byte, error) { return appendNumber(nil, float64(v)), nil }
