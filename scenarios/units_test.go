package scenarios

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"cclab/sim"
)

func TestParseQuantityStrings(t *testing.T) {
	tests := []struct {
		q    *quantity
		in   string
		want int64
		err  string // exact message when not ""
	}{
		{timeQuantity, "1us", 1_000_000, ""},
		{timeQuantity, "2.5ms", 2_500_000_000, ""},
		{timeQuantity, "20.96ns", 20_960, ""},
		{timeQuantity, "0s", 0, ""},
		{timeQuantity, "0us", 0, ""},
		{timeQuantity, "10 us", 10_000_000, ""},
		{timeQuantity, "1µs", 1_000_000, ""},
		{timeQuantity, "1μs", 1_000_000, ""},
		{timeQuantity, "7ps", 7, ""},
		{timeQuantity, "3600s", int64(3600 * sim.Second), ""},
		{timeQuantity, "0.000001s", 1_000_000, ""},
		{sizeQuantity, "1.5KB", 1500, ""},
		{sizeQuantity, "0.3MB", 300_000, ""},
		{sizeQuantity, "32MiB", 32 << 20, ""},
		{sizeQuantity, "1.5KiB", 1536, ""},
		{sizeQuantity, "1000B", 1000, ""},
		{sizeQuantity, "2GB", 2e9, ""},
		{rateQuantity, "100Gbps", 100e9, ""},
		{rateQuantity, "2.5Gbps", 2.5e9, ""},
		{rateQuantity, "1Tbps", 1e12, ""},
		{rateQuantity, "64Kbps", 64e3, ""},

		{rateQuantity, "10Gps", 0, `unknown unit "Gps" (want bps, Kbps, Mbps, Gbps, Tbps)`},
		{rateQuantity, "10gbps", 0, `unknown unit "gbps" (want bps, Kbps, Mbps, Gbps, Tbps)`},
		{timeQuantity, "10", 0, `missing unit in "10" (want ps, ns, us, ms, s)`},
		{timeQuantity, "-1us", 0, `must not be negative, got "-1us"`},
		{timeQuantity, "1.5ps", 0, `"1.5ps" is not a whole number of picoseconds`},
		{sizeQuantity, "1.5B", 0, `"1.5B" is not a whole number of bytes`},
		{sizeQuantity, "0.1KiB", 0, `"0.1KiB" is not a whole number of bytes`},
		{sizeQuantity, "10kB", 0, `unknown unit "kB" (want B, KB, MB, GB, KiB, MiB, GiB)`},
		{timeQuantity, "us", 0, `invalid time "us" (want a number and a unit, e.g. "10us")`},
		{timeQuantity, "1.us", 0, `invalid time "1.us" (want a number and a unit, e.g. "10us")`},
		{timeQuantity, ".5us", 0, `invalid time ".5us" (want a number and a unit, e.g. "10us")`},
		{timeQuantity, "1e3us", 0, `unknown unit "e3us" (want ps, ns, us, ms, s)`},
		{timeQuantity, "10  us", 0, `unknown unit " us" (want ps, ns, us, ms, s)`},
		{timeQuantity, " 10us", 0, `invalid time " 10us" (want a number and a unit, e.g. "10us")`},
		{timeQuantity, "3601s", 0, `must be at most 3600s, got "3601s"`},
		{sizeQuantity, "2TB", 0, `unknown unit "TB" (want B, KB, MB, GB, KiB, MiB, GiB)`},
		{sizeQuantity, "1025GiB", 0, `must be at most 1024GiB, got "1025GiB"`},
		{rateQuantity, "101Tbps", 0, `must be at most 100Tbps, got "101Tbps"`},
		{rateQuantity, "1.5bps", 0, `"1.5bps" is not a whole number of bits per second`},
		{rateQuantity, "99999999999999999999999999999999999999999Gbps", 0, `must be at most 100Tbps, got "99999999999999999999999999999999999999999Gbps"`},
	}
	for _, tt := range tests {
		got, msg := tt.q.parseString(tt.in)
		if msg != tt.err {
			t.Errorf("%s %q: error %q, want %q", tt.q.what, tt.in, msg, tt.err)
			continue
		}
		if tt.err == "" && got != tt.want {
			t.Errorf("%s %q = %d, want %d", tt.q.what, tt.in, got, tt.want)
		}
	}
}

func TestParseQuantityNumbers(t *testing.T) {
	tests := []struct {
		q    *quantity
		in   string // JSON number text: the SI base unit
		want int64
		bad  bool
	}{
		{timeQuantity, "0.002", 2_000_000_000, false},
		{timeQuantity, "1e-6", 1_000_000, false},
		{timeQuantity, "0", 0, false},
		{timeQuantity, "1e-13", 0, true}, // 0.1 ps
		{timeQuantity, "-1", 0, true},
		{timeQuantity, "1e999", 0, true},
		{sizeQuantity, "1500", 1500, false},
		{sizeQuantity, "1.5e3", 1500, false},
		{sizeQuantity, "0.5", 0, true},
		{rateQuantity, "1e11", 100e9, false},
		{rateQuantity, "1e15", 0, true},
	}
	for _, tt := range tests {
		got, msg := tt.q.parseNumber(tt.in)
		if (msg != "") != tt.bad {
			t.Errorf("%s %s: error %q, want error %v", tt.q.what, tt.in, msg, tt.bad)
			continue
		}
		if !tt.bad && got != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.q.what, tt.in, got, tt.want)
		}
	}
}

func TestFormatQuantities(t *testing.T) {
	times := map[sim.Time]string{
		0: "0s", 1: "1ps", 999: "999ps", 1000: "1ns", 20_960: "20.96ns", sim.Microsecond: "1us",
		2_500_000_000: "2.5ms", 10 * sim.Second: "10s", 1_000_000_001: "1.000000001ms",
		sim.Second + 1: "1.000000000001s",
	}
	for v, want := range times {
		if got := FormatTime(v); got != want {
			t.Errorf("FormatTime(%d) = %q, want %q", v, got, want)
		}
	}
	sizes := map[int64]string{
		0: "0B", 48: "48B", 1000: "1KB", 1500: "1.5KB", 1024: "1KiB", 1536: "1.536KB",
		32 << 20: "32MiB", 1_000_000: "1MB", 300_000: "300KB", 2_048_000: "2000KiB",
		1 << 30: "1GiB", 1_711_250: "1.71125MB", 30e9: "30GB",
	}
	for v, want := range sizes {
		if got := FormatSize(v); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", v, got, want)
		}
	}
	rates := map[int64]string{
		1: "1bps", 1000: "1Kbps", 100e9: "100Gbps", 2.5e9: "2.5Gbps", 400e9: "400Gbps", 1e12: "1Tbps", 25e9 + 1: "25.000000001Gbps",
	}
	for v, want := range rates {
		if got := FormatRate(v); got != want {
			t.Errorf("FormatRate(%d) = %q, want %q", v, got, want)
		}
	}
}

// Every value formats to a string that parses back to it.
func TestFormatRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, q := range []*quantity{timeQuantity, sizeQuantity, rateQuantity} {
		for i := 0; i < 20000; i++ {
			var v int64
			switch i % 4 {
			case 0:
				v = r.Int64N(q.max + 1)
			case 1:
				v = r.Int64N(1 << 20)
			case 2:
				v = r.Int64N(1000) * []int64{1, 1e3, 1e6, 1e9, 1024, 1 << 20}[r.IntN(6)]
			case 3:
				v = int64(i / 4)
			}
			if v > q.max {
				continue
			}
			s := q.format(v)
			back, msg := q.parseString(s)
			if msg != "" || back != v {
				t.Fatalf("%s %d -> %q -> %d (%s)", q.what, v, s, back, msg)
			}
		}
	}
}

func TestExportedParsers(t *testing.T) {
	if v, err := ParseTime("2.5ms"); err != nil || v != 2500*sim.Microsecond {
		t.Errorf("ParseTime = %v, %v", v, err)
	}
	if v, err := ParseSize("1MB"); err != nil || v != 1e6 {
		t.Errorf("ParseSize = %v, %v", v, err)
	}
	if _, err := ParseRate("10Gps"); err == nil || err.Error() != `unknown unit "Gps" (want bps, Kbps, Mbps, Gbps, Tbps)` {
		t.Errorf("ParseRate error = %v", err)
	}
}

// The int64 path of parseString answers exactly what the rational path
// does wherever it answers, and it answers for the common quantities
// (whole and decimal sizes, times and rates well within range).
func TestQuantityExactMatchesRat(t *testing.T) {
	rat := func(q *quantity, num string, f int64) (int64, bool) {
		r, ok := new(big.Rat).SetString(num)
		if !ok {
			t.Fatalf("%q: not a number", num)
		}
		v, msg := q.fromRat(r, f, num)
		return v, msg == ""
	}
	rng := rand.New(rand.NewPCG(19, 5))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	var nums []string
	for range 4000 {
		n := digits(1 + rng.IntN(22))
		if rng.IntN(2) == 0 {
			n += "." + digits(1+rng.IntN(14))
		}
		nums = append(nums, n)
	}
	nums = append(nums, "0", "0.0", "9223372036854775807", "9223372036854775808", "922337203685477580.7",
		"3600", "3600.000000000001", "1024", "1025", "100", "100.5", "0.000000000001", "0.0000000000001", "00012.500")
	for _, q := range []*quantity{timeQuantity, sizeQuantity, rateQuantity} {
		for _, u := range q.units {
			for _, num := range nums {
				v, ok := q.exact(num, u.factor)
				if !ok {
					continue
				}
				if w, wok := rat(q, num, u.factor); !wok || w != v {
					t.Fatalf("%s %s%s: int64 path %d, rational path %d (ok %v)", q.what, num, u.name, v, w, wok)
				}
			}
		}
	}
	for _, tc := range []struct {
		q   *quantity
		in  string
		num string
		f   int64
	}{
		{sizeQuantity, "5101961B", "5101961", 1},
		{timeQuantity, "962ns", "962", int64(sim.Nanosecond)},
		{timeQuantity, "20.96ns", "20.96", int64(sim.Nanosecond)},
		{timeQuantity, "101ms", "101", int64(sim.Millisecond)},
		{rateQuantity, "2.5Gbps", "2.5", 1e9},
		{sizeQuantity, "1.5KiB", "1.5", 1 << 10},
	} {
		v, ok := tc.q.exact(tc.num, tc.f)
		if w, _ := tc.q.parseString(tc.in); !ok || v != w {
			t.Errorf("%s: int64 path %d (ok %v), parseString %d", tc.in, v, ok, w)
		}
	}
}
