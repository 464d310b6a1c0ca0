package store

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"slices"
)

// Chunk encoding.
//
// A chunk holds n >= 1 points (t int64 picoseconds, v float64) of one series
// and decodes on its own:
//
//	uvarint n
//	varint  t[0]                     (zigzag, encoding/binary)
//	bitstream, most significant bit first, zero-padded to a byte:
//	  value 0, then for i = 1 .. n-1: time i, value i
//
// Times are delta-of-delta coded: d[i] = t[i] - t[i-1] (d[0] = 0) and
// dod = d[i] - d[i-1], all in wrapping int64 arithmetic, so any sequence of
// int64 round-trips; zz = zigzag(dod) is written as
//
//	'0'                zz = 0 (regular sampling: one bit a point)
//	'10'   + 12 bits   zz < 2^12 (|dod| < 2 ns)
//	'110'  + 28 bits   zz < 2^28 (|dod| < 134 µs: a chunk's first interval)
//	'1110' + 44 bits   zz < 2^44 (|dod| < 8.8 s)
//	'1111' + 64 bits   otherwise
//
// Values are Gorilla-coded (Pelkonen et al., VLDB 2015): x is the XOR of the
// value's IEEE-754 bits with the previous value's (0 before the first
// value, so a leading 0.0 costs one bit), and with lead/trail its leading
// and trailing zero bits:
//
//	'0'                                    x = 0 (value repeated)
//	'10' + meaningful bits                 x fits the previous window
//	'11' + 6 bits lead + 6 bits (len-1)    a new window: len = 64-lead-trail
//	     + len meaningful bits
//
// The encoder reuses the previous window only when it costs no more than a
// new one would. Every float64 bit pattern (-0, ±Inf, NaN payloads)
// round-trips exactly.

// maxChunkPoints is the most points Recorder puts in one chunk.
const maxChunkPoints = 4096

// errCorrupt is returned for chunk data that does not decode.
var errCorrupt = errors.New("corrupt chunk data")

// bitWriter appends bits to a byte slice, most significant bit first.
type bitWriter struct {
	buf []byte
	acc uint64 // the low n bits are pending
	n   uint   // < 8 between calls
}

// write appends the low nbits (1..64) bits of v.
func (w *bitWriter) write(v uint64, nbits uint) {
	if nbits > 32 {
		w.write(v>>32, nbits-32)
		nbits = 32
	}
	w.acc = w.acc<<nbits | v&(1<<nbits-1)
	w.n += nbits
	for w.n >= 8 {
		w.n -= 8
		w.buf = append(w.buf, byte(w.acc>>w.n))
	}
}

// bit appends one bit.
func (w *bitWriter) bit(b bool) {
	if b {
		w.write(1, 1)
	} else {
		w.write(0, 1)
	}
}

// finish pads the last byte with zeros and returns the buffer.
func (w *bitWriter) finish() []byte {
	if w.n > 0 {
		w.buf = append(w.buf, byte(w.acc<<(8-w.n)))
		w.n = 0
	}
	return w.buf
}

// bitReader reads bits written by bitWriter.
type bitReader struct {
	data []byte
	pos  int    // next byte of data to load
	acc  uint64 // the next n bits, left-aligned
	n    uint
}

// fill loads bytes until at least 57 bits are buffered or data is used up.
func (r *bitReader) fill() {
	if r.pos+8 <= len(r.data) {
		// Load 8 bytes; keep the whole bytes that fit.
		v := binary.BigEndian.Uint64(r.data[r.pos:])
		take := (64 - r.n) / 8
		r.acc |= v >> r.n &^ (uint64(math.MaxUint64) >> (r.n + take*8))
		r.pos += int(take)
		r.n += take * 8
		return
	}
	for r.n <= 56 && r.pos < len(r.data) {
		r.acc |= uint64(r.data[r.pos]) << (56 - r.n)
		r.pos++
		r.n += 8
	}
}

// read returns the next nbits (1..32) bits.
func (r *bitReader) read(nbits uint) (uint64, error) {
	if r.n < nbits {
		r.fill()
		if r.n < nbits {
			return 0, errCorrupt
		}
	}
	v := r.acc >> (64 - nbits)
	r.acc <<= nbits
	r.n -= nbits
	return v, nil
}

// read64 returns the next nbits (1..64) bits.
func (r *bitReader) read64(nbits uint) (uint64, error) {
	if nbits <= 32 {
		return r.read(nbits)
	}
	hi, err := r.read(nbits - 32)
	if err != nil {
		return 0, err
	}
	lo, err := r.read(32)
	if err != nil {
		return 0, err
	}
	return hi<<32 | lo, nil
}

// ones counts the 1 bits before the next 0 bit, reading at most max bits
// (the terminating 0 included).
func (r *bitReader) ones(max uint) (uint, error) {
	if r.n < max {
		r.fill()
	}
	if r.n == 0 {
		return 0, errCorrupt
	}
	k := uint(bits.LeadingZeros64(^r.acc))
	if k >= max {
		k = max
		if r.n < k {
			return 0, errCorrupt
		}
		r.acc <<= k
		r.n -= k
		return k, nil
	}
	if r.n < k+1 {
		return 0, errCorrupt
	}
	r.acc <<= k + 1
	r.n -= k + 1
	return k, nil
}

func zigzag(x int64) uint64   { return uint64(x<<1) ^ uint64(x>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// dodWidths are the payload bits of the delta-of-delta codes '10', '110',
// '1110' and '1111'.
var dodWidths = [4]uint{12, 28, 44, 64}

// valueEncoder is the Gorilla XOR state of one chunk.
type valueEncoder struct {
	prev        uint64
	lead, trail uint // the current window; lead = 64 means none yet
}

func (e *valueEncoder) put(w *bitWriter, v float64) {
	b := math.Float64bits(v)
	x := b ^ e.prev
	e.prev = b
	if x == 0 {
		w.bit(false)
		return
	}
	lead := uint(bits.LeadingZeros64(x))
	trail := uint(bits.TrailingZeros64(x))
	if e.lead < 64 && lead >= e.lead && trail >= e.trail &&
		64-e.lead-e.trail <= 64-lead-trail+12 {
		w.write(0b10, 2)
		w.write(x>>e.trail, 64-e.lead-e.trail)
		return
	}
	n := 64 - lead - trail
	w.write(0b11, 2)
	w.write(uint64(lead), 6)
	w.write(uint64(n-1), 6)
	w.write(x>>trail, n)
	e.lead, e.trail = lead, trail
}

// appendChunk appends the encoding of the points (len(t) = len(v) >= 1) to
// dst.
func appendChunk(dst []byte, t []int64, v []float64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(t)))
	dst = binary.AppendVarint(dst, t[0])
	w := bitWriter{buf: dst}
	ve := valueEncoder{lead: 64}
	ve.put(&w, v[0])
	prevT, prevD := t[0], int64(0)
	for i := 1; i < len(t); i++ {
		d := t[i] - prevT
		zz := zigzag(d - prevD)
		prevT, prevD = t[i], d
		switch {
		case zz == 0:
			w.write(0, 1)
		case zz < 1<<12:
			w.write(0b10, 2)
			w.write(zz, 12)
		case zz < 1<<28:
			w.write(0b110, 3)
			w.write(zz, 28)
		case zz < 1<<44:
			w.write(0b1110, 4)
			w.write(zz, 44)
		default:
			w.write(0b1111, 4)
			w.write(zz, 64)
		}
		ve.put(&w, v[i])
	}
	return w.finish()
}

// chunkHeader returns a chunk's point count, first time and the offset of
// its bitstream.
func chunkHeader(data []byte) (n int, t0 int64, off int, err error) {
	un, k := binary.Uvarint(data)
	if k <= 0 {
		return 0, 0, 0, errCorrupt
	}
	t0, k2 := binary.Varint(data[k:])
	if k2 <= 0 {
		return 0, 0, 0, errCorrupt
	}
	off = k + k2
	// Every point takes at least one bit.
	if un == 0 || un > uint64(len(data)-off)*8 {
		return 0, 0, 0, errCorrupt
	}
	return int(un), t0, off, nil
}

// decodeChunk appends the points of a chunk to ts and vs.
func decodeChunk(data []byte, ts []int64, vs []float64) ([]int64, []float64, error) {
	n, t, off, err := chunkHeader(data)
	if err != nil {
		return ts, vs, err
	}
	ts, vs = slices.Grow(ts, n), slices.Grow(vs, n)
	r := bitReader{data: data[off:]}
	var prev uint64
	lead, trail := uint(64), uint(0)
	var d int64
	for i := 0; i < n; i++ {
		if i > 0 {
			k, err := r.ones(4)
			if err != nil {
				return ts, vs, err
			}
			if k > 0 {
				zz, err := r.read64(dodWidths[k-1])
				if err != nil {
					return ts, vs, err
				}
				d += unzigzag(zz)
			}
			t += d
		}
		k, err := r.ones(2)
		if err != nil {
			return ts, vs, err
		}
		switch k {
		case 1: // the previous window
			if lead == 64 {
				return ts, vs, errCorrupt
			}
			x, err := r.read64(64 - lead - trail)
			if err != nil {
				return ts, vs, err
			}
			prev ^= x << trail
		case 2: // a new window
			h, err := r.read(12)
			if err != nil {
				return ts, vs, err
			}
			l, m := uint(h>>6), uint(h&63)+1
			if l+m > 64 {
				return ts, vs, errCorrupt
			}
			x, err := r.read64(m)
			if err != nil {
				return ts, vs, err
			}
			lead, trail = l, 64-l-m
			prev ^= x << trail
		}
		ts = append(ts, t)
		vs = append(vs, math.Float64frombits(prev))
	}
	return ts, vs, nil
}
