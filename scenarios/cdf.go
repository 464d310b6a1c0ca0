package scenarios

import (
	"embed"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The flow-size CDFs, copied from their published sources with the notes
// ('#' lines) intact; cdf/README.md says where each comes from.
//
//go:embed cdf/*.txt
var cdfFiles embed.FS

// cdfTable maps CDF names to files. The first six are the contract's names;
// the last three are the alternative files under their base names.
var cdfTable = []struct{ name, file string }{
	{"websearch", "websearch_cdf.txt"},
	{"fbhadoop", "fb_hadoop_cdf.txt"},
	{"alistorage", "alistorage2019_cdf.txt"},
	{"datamining", "datamining_cdf.txt"},
	{"cachefollower", "cachefollower_cdf.txt"},
	{"webserver", "webserver_cdf.txt"},
	{"datamining_vl2cdf", "datamining_vl2cdf_cdf.txt"},
	{"cachefollower_homa_intracluster", "cachefollower_homa_intracluster_cdf.txt"},
	{"webserver_homa_intracluster", "webserver_homa_intracluster_cdf.txt"},
}

// CDFPoint is one point of a flow-size CDF: Percent of flows (0..100) are at
// most Bytes long.
type CDFPoint struct {
	Bytes   float64
	Percent float64
}

// CDF is a flow-size distribution read with linear interpolation between its
// points, as HPCC's traffic generator (traffic_gen/custom_rand.py) reads it.
type CDF struct {
	Name   string // "" for an inline CDF
	Points []CDFPoint
}

// maxCDFPoints bounds an inline CDF.
const maxCDFPoints = 10000

// CDFNames lists the names LoadCDF accepts.
func CDFNames() []string {
	names := make([]string, len(cdfTable))
	for i, c := range cdfTable {
		names[i] = c.name
	}
	return names
}

// LoadCDF returns an embedded CDF by name.
func LoadCDF(name string) (*CDF, error) {
	for _, c := range cdfTable {
		if c.name != name {
			continue
		}
		data, err := cdfFiles.ReadFile("cdf/" + c.file)
		if err != nil {
			return nil, fmt.Errorf("cdf %s: %w", name, err)
		}
		pts, err := parseCDFText(string(data))
		if err != nil {
			return nil, fmt.Errorf("cdf %s (%s): %w", name, c.file, err)
		}
		return NewCDF(name, pts)
	}
	return nil, fmt.Errorf("unknown cdf %q (want one of %s)", name, strings.Join(CDFNames(), ", "))
}

// parseCDFText reads "<bytes> <percent>" lines; '#' lines and blank lines are
// skipped.
func parseCDFText(text string) ([]CDFPoint, error) {
	var pts []CDFPoint
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want <bytes> <percent>, got %q", n+1, line)
		}
		b, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: want two numbers, got %q", n+1, line)
		}
		pts = append(pts, CDFPoint{Bytes: b, Percent: p})
	}
	return pts, nil
}

// NewCDF checks points and returns the CDF. The rules are HPCC's
// (custom_rand.py testCdf): at least two points, the first at 0 %, the last
// at 100 %, sizes and percents strictly increasing; sizes are finite and
// >= 0.
func NewCDF(name string, points []CDFPoint) (*CDF, error) {
	if i, msg := checkCDF(points); msg != "" {
		if i >= 0 {
			return nil, fmt.Errorf("point %d: %s", i, msg)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return &CDF{Name: name, Points: append([]CDFPoint(nil), points...)}, nil
}

// checkCDF returns the index of the offending point (-1 for the whole list)
// and a message, or "" when the points are a valid CDF.
func checkCDF(pts []CDFPoint) (int, string) {
	if len(pts) < 2 {
		return -1, fmt.Sprintf("want at least 2 points, got %d", len(pts))
	}
	if len(pts) > maxCDFPoints {
		return -1, fmt.Sprintf("want at most %d points, got %d", maxCDFPoints, len(pts))
	}
	for i, p := range pts {
		if math.IsNaN(p.Bytes) || math.IsInf(p.Bytes, 0) || p.Bytes < 0 || p.Bytes > float64(MaxSize) {
			return i, fmt.Sprintf("size must be in [0, %d] bytes, got %g", MaxSize, p.Bytes)
		}
		if math.IsNaN(p.Percent) || p.Percent < 0 || p.Percent > 100 {
			return i, fmt.Sprintf("percent must be in [0, 100], got %g", p.Percent)
		}
		if i > 0 && p.Bytes <= pts[i-1].Bytes {
			return i, fmt.Sprintf("sizes must increase strictly (%g after %g)", p.Bytes, pts[i-1].Bytes)
		}
		if i > 0 && p.Percent <= pts[i-1].Percent {
			return i, fmt.Sprintf("percents must increase strictly (%g after %g)", p.Percent, pts[i-1].Percent)
		}
	}
	if pts[0].Percent != 0 {
		return 0, fmt.Sprintf("the first point must be at 0 percent, got %g", pts[0].Percent)
	}
	if last := pts[len(pts)-1]; last.Percent != 100 {
		return len(pts) - 1, fmt.Sprintf("the last point must be at 100 percent, got %g", last.Percent)
	}
	return -1, ""
}

// Mean is the mean flow size in bytes by the trapezoid rule (HPCC's getAvg),
// which is the exact mean of the linearly interpolated distribution.
func (c *CDF) Mean() float64 {
	s := 0.0
	for i := 1; i < len(c.Points); i++ {
		a, b := c.Points[i-1], c.Points[i]
		s += (a.Bytes + b.Bytes) / 2 * (b.Percent - a.Percent)
	}
	return s / 100
}

// Quantile returns the size at fraction p (0..1) of the flows, interpolating
// linearly between points as HPCC's getValueFromPercentile does.
func (c *CDF) Quantile(p float64) float64 {
	y := p * 100
	pts := c.Points
	if y <= pts[0].Percent {
		return pts[0].Bytes
	}
	for i := 1; i < len(pts); i++ {
		if y <= pts[i].Percent {
			a, b := pts[i-1], pts[i]
			return a.Bytes + (b.Bytes-a.Bytes)/(b.Percent-a.Percent)*(y-a.Percent)
		}
	}
	return pts[len(pts)-1].Bytes
}

// Sample turns a uniform u in [0, 1) into a flow size: Quantile(u) rounded to
// the nearest whole byte, at least 1 byte.
func (c *CDF) Sample(u float64) int64 {
	b := int64(math.Round(c.Quantile(u)))
	if b < 1 {
		b = 1
	}
	return b
}
