package report

import "fmt"

// The report's colours. Nodes take the colours of Okabe and Ito's
// palette for colour-blind readers, with Paul Tol's muted colours after
// them, leaving out yellow and orange, which are the nemesis's, and
// vermilion, which marks violations. Hue is never the only cue: a bar
// that is wide enough carries the name of the leader it stands for, a
// node's colours repeat only with a pattern (stripes, then dots), and in
// plots each node also has its own dash and marker.
var nodeColours = []string{
	"#0072B2", // blue
	"#56B4E9", // sky blue
	"#009E73", // bluish green
	"#CC79A7", // reddish purple
	"#332288", // indigo
	"#44AA99", // teal
	"#882255", // wine
	"#AA4499", // purple
}

// The colours of what is not a node.
const (
	colNemesis       = "#F0E442" // Okabe–Ito yellow: the nemesis's bands
	colNemesisStroke = "#A08C00"
	colNemesisText   = "#6B5D00"
	colViolation     = "#D55E00" // Okabe–Ito vermilion: violations, drops, accepted corruptions
	colNoLeader      = "#d8d8d8"
	colMixed         = "#8c8c8c"
	colUnknown       = "#ffffff" // a belief not known: outlined, dashed, with a ?
	colOther         = "#777777"
	colMono          = "#111111" // messages drawn over coloured bars
)

// nodeStyle is how a node's colour is drawn.
type nodeStyle struct {
	colour  string
	pattern string // "", "stripes" or "dots": the cue once colours repeat
	dash    string // the stroke-dasharray of its lines in plots
	marker  string // the marker of its points in plots: circle, square, triangle, diamond
	dark    bool   // white text reads on it
}

var (
	patterns = []string{"", "stripes", "dots"}
	dashes   = []string{"", "6,3", "2,2", "8,3,2,3", "4,4", "1,3"}
	markers  = []string{"circle", "square", "triangle", "diamond"}
)

// styleOf is the style of the i-th node.
func styleOf(i int) nodeStyle {
	if i < 0 {
		return nodeStyle{colour: colOther, dark: true, marker: "circle"}
	}
	c := i % len(nodeColours)
	return nodeStyle{
		colour:  nodeColours[c],
		pattern: patterns[(i/len(nodeColours))%len(patterns)],
		dash:    dashes[i%len(dashes)],
		marker:  markers[i%len(markers)],
		dark:    c != 1 && c != 3 && c != 5, // sky blue, reddish purple and teal are light
	}
}

// fill is what an SVG fill attribute takes for the style: the colour, or
// the pattern that carries it (see patternDefs).
func (s nodeStyle) fill(i int) string {
	if s.pattern == "" || i < 0 {
		return s.colour
	}
	return fmt.Sprintf("url(#node-%d)", i)
}

// textColour is the colour of a label on the style's fill.
func (s nodeStyle) textColour() string {
	if s.dark {
		return "#fff"
	}
	return "#000"
}

// patternDefs defines the patterns of the first n nodes' styles, for an
// SVG's defs; ids are unique in the page only if each SVG uses a distinct
// prefix, so every SVG of the page uses the same definitions, written once.
func patternDefs(n int) string {
	var out []byte
	for i := range n {
		s := styleOf(i)
		switch s.pattern {
		case "stripes":
			out = fmt.Appendf(out, `<pattern id="node-%d" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="%s"/><rect width="2" height="6" fill="#fff" fill-opacity="0.6"/></pattern>`, i, s.colour)
		case "dots":
			out = fmt.Appendf(out, `<pattern id="node-%d" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="%s"/><circle cx="2.5" cy="2.5" r="1.2" fill="#fff" fill-opacity="0.7"/></pattern>`, i, s.colour)
		}
	}
	return string(out)
}

// swatchCSS is a CSS background for the style, for legends.
func (s nodeStyle) swatchCSS() string {
	switch s.pattern {
	case "stripes":
		return fmt.Sprintf("repeating-linear-gradient(45deg, %s 0 3px, #fff 3px 5px)", s.colour)
	case "dots":
		return fmt.Sprintf("radial-gradient(circle, #fff 1px, transparent 1.5px) 0 0 / 5px 5px, %s", s.colour)
	}
	return s.colour
}

// typeColours colour message types in the space-time diagram, the most
// sent first: the same colours, ordered so that the first few differ
// most; each arrow also carries its type's name.
var typeColours = []string{"#0072B2", "#009E73", "#CC79A7", "#AA4499", "#56B4E9", "#882255", "#332288", "#44AA99"}
