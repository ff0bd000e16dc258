package report

import (
	"fmt"
	"math"
	"strconv"
	"testing"
)

// rgb is a colour in linear RGB, each channel in [0, 1].
type rgb [3]float64

func parseHex(s string) rgb {
	var c rgb
	for i := range 3 {
		v, err := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		if err != nil {
			panic(fmt.Sprintf("colour %q: %v", s, err))
		}
		x := float64(v) / 255
		if x <= 0.04045 {
			c[i] = x / 12.92
		} else {
			c[i] = math.Pow((x+0.055)/1.055, 2.4)
		}
	}
	return c
}

// Simulations of colour-vision deficiencies in linear RGB: Viénot,
// Brettel and Mollon (1999) for protanopia and deuteranopia, Machado,
// Oliveira and Fernandes (2009, severity 1) for tritanopia.
var visions = map[string][3][3]float64{
	"normal":       {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	"protanopia":   {{0.11238, 0.88762, 0}, {0.11238, 0.88762, 0}, {0.00401, -0.00401, 1}},
	"deuteranopia": {{0.29275, 0.70725, 0}, {0.29275, 0.70725, 0}, {-0.02234, 0.02234, 1}},
	"tritanopia":   {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
}

func (c rgb) seen(m [3][3]float64) rgb {
	var out rgb
	for i := range 3 {
		for j := range 3 {
			out[i] += m[i][j] * c[j]
		}
		out[i] = math.Max(0, math.Min(1, out[i]))
	}
	return out
}

// lab converts linear sRGB (D65) to CIELAB.
func (c rgb) lab() [3]float64 {
	x := 0.4124*c[0] + 0.3576*c[1] + 0.1805*c[2]
	y := 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
	z := 0.0193*c[0] + 0.1192*c[1] + 0.9505*c[2]
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	fx, fy, fz := f(x/0.95047), f(y), f(z/1.08883)
	return [3]float64{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}
}

// deltaE is the CIE76 distance between two colours as a reader sees them.
func deltaE(a, b string, vision [3][3]float64) float64 {
	la, lb := parseHex(a).seen(vision).lab(), parseHex(b).seen(vision).lab()
	return math.Sqrt((la[0]-lb[0])*(la[0]-lb[0]) + (la[1]-lb[1])*(la[1]-lb[1]) + (la[2]-lb[2])*(la[2]-lb[2]))
}

// minApart is the least CIE76 distance between a node's colour and the
// nemesis's or a violation's, for every reader: well past "clearly
// different" (about 10), so that the reader never takes one for the other.
const minApart = 20

// No node shares a colour with the nemesis or the violations, for readers
// with normal vision and with each common colour-vision deficiency. (The
// palette this replaced failed it: its n5, #edc948, was 9 from the
// nemesis's #e0b000.)
func TestPaletteKeepsNodesApartFromNemesisAndViolations(t *testing.T) {
	for name, v := range visions {
		for i, c := range nodeColours {
			for what, other := range map[string]string{"nemesis": colNemesis, "violation": colViolation} {
				if d := deltaE(c, other, v); d < minApart {
					t.Errorf("%s: node colour %d (%s) is %.1f from the %s's %s, want at least %d", name, i, c, d, what, other, minApart)
				}
			}
		}
	}
	if d := deltaE("#edc948", "#e0b000", visions["normal"]); d >= minApart {
		t.Errorf("the old n5 and nemesis are %.1f apart: the test cannot tell a bad palette", d)
	}
}

// Nodes' colours differ from one another for readers with normal vision;
// past the palette's length a pattern tells them apart, and in plots each
// of the first nodes has its own dash and marker.
func TestNodeStylesDiffer(t *testing.T) {
	for i := range nodeColours {
		for j := range i {
			if d := deltaE(nodeColours[i], nodeColours[j], visions["normal"]); d < 15 {
				t.Errorf("node colours %d and %d are %.1f apart", i, j, d)
			}
		}
	}
	seen := map[[2]string]int{}
	for i := range 3 * len(nodeColours) {
		s := styleOf(i)
		k := [2]string{s.colour, s.pattern}
		if j, ok := seen[k]; ok {
			t.Errorf("nodes %d and %d have the same colour and pattern", j, i)
		}
		seen[k] = i
	}
	cues := map[[2]string]int{}
	for i := range len(dashes) {
		s := styleOf(i)
		cues[[2]string{s.dash, s.marker}]++
	}
	if len(cues) != len(dashes) {
		t.Errorf("the first %d nodes share dash and marker pairs: %v", len(dashes), cues)
	}
}
