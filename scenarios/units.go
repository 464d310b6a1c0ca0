package scenarios

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"cclab/sim"
)

// Quantities with units.
//
// A quantity is written as a string "<number><unit>" (a single space between
// the number and the unit is also accepted): the number is decimal digits with
// an optional fraction ("2.5ms"), no sign, no exponent. A bare JSON number
// means the SI base unit: seconds, bytes, bits per second; it may use JSON's
// fraction and exponent ("duration": 0.002). Every value is converted exactly
// and must come out as a whole number of the internal unit (picoseconds,
// bytes, bits per second), otherwise it is an error.

// unit is one accepted unit and its size in the internal unit.
type unit struct {
	name   string
	factor int64
}

// quantity describes one kind of quantity.
type quantity struct {
	what     string // "time", "size", "rate"
	internal string // the internal unit, plural: "picoseconds"
	units    []unit // accepted units, in the order the error message lists them
	aliases  map[string]int64
	bare     int64 // internal units per base unit (a bare JSON number)
	max      int64 // largest accepted value, in internal units
	example  string
}

// MaxTime is the largest time a scenario may contain (any start, duration,
// interval or event time): one hour of simulated time, far beyond what a
// packet-level run can cover, and small enough that sums of a few times never
// overflow the int64 picosecond clock.
const MaxTime = 3600 * sim.Second

// MaxSize is the largest size (flow, buffer, threshold): 1 TiB.
const MaxSize int64 = 1 << 40

// MaxRate is the largest link rate: 100 Tbps.
const MaxRate int64 = 100e12

var timeQuantity = &quantity{
	what:     "time",
	internal: "picoseconds",
	units: []unit{
		{"ps", 1}, {"ns", int64(sim.Nanosecond)}, {"us", int64(sim.Microsecond)},
		{"ms", int64(sim.Millisecond)}, {"s", int64(sim.Second)},
	},
	aliases: map[string]int64{"µs": int64(sim.Microsecond), "μs": int64(sim.Microsecond)},
	bare:    int64(sim.Second),
	max:     int64(MaxTime),
	example: `"10us"`,
}

var sizeQuantity = &quantity{
	what:     "size",
	internal: "bytes",
	units: []unit{
		{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	},
	bare:    1,
	max:     MaxSize,
	example: `"1MB"`,
}

var rateQuantity = &quantity{
	what:     "rate",
	internal: "bits per second",
	units: []unit{
		{"bps", 1}, {"Kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9}, {"Tbps", 1e12},
	},
	bare:    1,
	max:     MaxRate,
	example: `"100Gbps"`,
}

// unitNames lists the accepted units for error messages.
func (q *quantity) unitNames() string {
	names := make([]string, len(q.units))
	for i, u := range q.units {
		names[i] = u.name
	}
	return strings.Join(names, ", ")
}

// factor returns the size of a unit in internal units.
func (q *quantity) factor(name string) (int64, bool) {
	for _, u := range q.units {
		if u.name == name {
			return u.factor, true
		}
	}
	f, ok := q.aliases[name]
	return f, ok
}

// format writes v (internal units) the canonical way for this quantity.
func (q *quantity) format(v int64) string {
	switch q {
	case sizeQuantity:
		return formatSize(v)
	case rateQuantity:
		return formatRate(v)
	default:
		return formatTime(sim.Time(v))
	}
}

// maxDigits bounds the digits of a quantity string.
const maxDigits = 40

// parseString converts a quantity string. It returns the value in internal
// units, or a message saying what is wrong.
func (q *quantity) parseString(s string) (int64, string) {
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Sprintf("must not be negative, got %q", s)
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 {
		return 0, fmt.Sprintf("invalid %s %q (want a number and a unit, e.g. %s)", q.what, s, q.example)
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i+1 {
			return 0, fmt.Sprintf("invalid %s %q (want a number and a unit, e.g. %s)", q.what, s, q.example)
		}
		i = j
	}
	num, name := s[:i], s[i:]
	name = strings.TrimPrefix(name, " ")
	if name == "" {
		return 0, fmt.Sprintf("missing unit in %q (want %s)", s, q.unitNames())
	}
	f, ok := q.factor(name)
	if !ok {
		return 0, fmt.Sprintf("unknown unit %q (want %s)", name, q.unitNames())
	}
	if len(num) > maxDigits {
		return 0, fmt.Sprintf("must be at most %s, got %q", q.format(q.max), s)
	}
	if v, ok := q.exact(num, f); ok {
		return v, ""
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Sprintf("invalid %s %q (want a number and a unit, e.g. %s)", q.what, s, q.example)
	}
	return q.fromRat(r, f, strconv.Quote(s))
}

// exact is parseString's arithmetic in int64 for the common case: num
// (digits, perhaps with a fraction) times factor is a whole number within
// q.max, with no step overflowing. It reports false for anything else
// (which the exact rational path then decides, and words the error of):
// where it answers, it answers what that path would.
func (q *quantity) exact(num string, factor int64) (int64, bool) {
	var n int64
	frac := -1 // digits after the point
	for i := 0; i < len(num); i++ {
		c := num[i]
		if c == '.' {
			frac = 0
			continue
		}
		if n > (math.MaxInt64-9)/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if frac >= 0 {
			frac++
		}
	}
	if factor <= 0 || n > math.MaxInt64/factor {
		return 0, false
	}
	v := n * factor
	for ; frac > 0; frac-- {
		if v%10 != 0 {
			return 0, false
		}
		v /= 10
	}
	if v > q.max {
		return 0, false
	}
	return v, true
}

// parseNumber converts a bare JSON number (in the SI base unit).
func (q *quantity) parseNumber(text string) (int64, string) {
	r, ok := ratFromJSON(text)
	if !ok {
		return 0, fmt.Sprintf("must be at most %s, got %s", q.format(q.max), text)
	}
	if r.Sign() < 0 {
		return 0, fmt.Sprintf("must not be negative, got %s", text)
	}
	return q.fromRat(r, q.bare, text)
}

// fromRat scales r by factor and checks that it is a whole number in range.
func (q *quantity) fromRat(r *big.Rat, factor int64, shown string) (int64, string) {
	v := new(big.Rat).Mul(r, new(big.Rat).SetInt64(factor))
	if v.Cmp(new(big.Rat).SetInt64(q.max)) > 0 {
		return 0, fmt.Sprintf("must be at most %s, got %s", q.format(q.max), shown)
	}
	if !v.IsInt() {
		return 0, fmt.Sprintf("%s is not a whole number of %s", shown, q.internal)
	}
	return v.Num().Int64(), ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// maxExponent bounds the exponent of a JSON number we convert exactly.
const maxExponent = 60

// ratFromJSON converts the text of a JSON number exactly. It refuses numbers
// whose exponent is beyond ±maxExponent (no quantity or count needs them).
func ratFromJSON(text string) (*big.Rat, bool) {
	mant, exp := text, 0
	if k := strings.IndexAny(text, "eE"); k >= 0 {
		e, err := strconv.Atoi(text[k+1:])
		if err != nil || e < -maxExponent || e > maxExponent {
			return nil, false
		}
		mant, exp = text[:k], e
	}
	r, ok := new(big.Rat).SetString(mant)
	if !ok {
		return nil, false
	}
	if exp != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
		pr := new(big.Rat).SetInt(p)
		if exp > 0 {
			r.Mul(r, pr)
		} else {
			r.Quo(r, pr)
		}
	}
	return r, true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ParseTime converts a time string ("2.5ms") to picoseconds.
func ParseTime(s string) (sim.Time, error) {
	v, msg := timeQuantity.parseString(s)
	if msg != "" {
		return 0, fmt.Errorf("%s", msg)
	}
	return sim.Time(v), nil
}

// ParseSize converts a size string ("1.5KB", "32MiB") to bytes.
func ParseSize(s string) (int64, error) {
	v, msg := sizeQuantity.parseString(s)
	if msg != "" {
		return 0, fmt.Errorf("%s", msg)
	}
	return v, nil
}

// ParseRate converts a rate string ("100Gbps") to bits per second.
func ParseRate(s string) (int64, error) {
	v, msg := rateQuantity.parseString(s)
	if msg != "" {
		return 0, fmt.Errorf("%s", msg)
	}
	return v, nil
}

// formatScaled writes v/factor (factor a power of ten) with the fewest
// decimals that are exact: formatScaled(2500, 1000) = "2.5".
func formatScaled(v, factor int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	whole, frac := v/factor, v%factor
	s := sign + strconv.FormatInt(whole, 10)
	if frac == 0 {
		return s
	}
	width := len(strconv.FormatInt(factor, 10)) - 1
	digits := strconv.FormatInt(frac, 10)
	digits = strings.Repeat("0", width-len(digits)) + digits
	return s + "." + strings.TrimRight(digits, "0")
}

// formatDecimalUnits writes v in the largest of units (powers of ten,
// ascending) that leaves a value >= 1, with the fewest exact decimals.
func formatDecimalUnits(v int64, units []unit) string {
	u := units[0]
	for _, c := range units {
		if v >= c.factor || -v >= c.factor {
			u = c
		}
	}
	return formatScaled(v, u.factor) + u.name
}

// FormatTime writes a time the canonical way: the largest of s, ms, us, ns, ps
// that leaves a value >= 1, with the fewest exact decimals ("2.5ms",
// "20.96ns"); zero is "0s".
func FormatTime(t sim.Time) string { return formatTime(t) }

func formatTime(t sim.Time) string {
	if t == 0 {
		return "0s"
	}
	return formatDecimalUnits(int64(t), timeQuantity.units)
}

// FormatSize writes a size the canonical way: a whole number of the largest
// unit (GiB, GB, MiB, MB, KiB, KB) that divides it exactly ("32MiB", "30GB",
// "300KB"); failing that, the largest decimal unit that leaves a value >= 1,
// with the fewest exact decimals ("1.5KB", "1.71125MB", "48B"); zero is "0B".
func FormatSize(b int64) string { return formatSize(b) }

func formatSize(b int64) string {
	if b == 0 {
		return "0B"
	}
	if b > 0 {
		for _, u := range []unit{{"GiB", 1 << 30}, {"GB", 1e9}, {"MiB", 1 << 20}, {"MB", 1e6}, {"KiB", 1 << 10}, {"KB", 1e3}} {
			if b%u.factor == 0 {
				return strconv.FormatInt(b/u.factor, 10) + u.name
			}
		}
	}
	return formatDecimalUnits(b, []unit{{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}})
}

// FormatRate writes a rate the canonical way: the largest of Tbps, Gbps, Mbps,
// Kbps, bps that leaves a value >= 1, with the fewest exact decimals
// ("100Gbps", "2.5Gbps").
func FormatRate(bps int64) string { return formatRate(bps) }

func formatRate(bps int64) string {
	if bps == 0 {
		return "0bps"
	}
	return formatDecimalUnits(bps, rateQuantity.units)
}
