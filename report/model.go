package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/verdict"
)

// Bounds on what one report draws, whatever the history holds: the page
// stays a few megabytes at most, and a reader can still find their way.
const (
	maxRows       = 64    // nodes drawn; the rest are named in a note
	maxMetrics    = 12    // metric plots
	maxLanes      = 64    // client lanes of a mutex run
	detailCap     = 500   // copies drawn one by one in a window; more are counted per cell
	maxScriptData = 20000 // copies the page embeds for its script to narrow the window
)

// reportModel is what the drawings of one report share: the history, its
// verdicts and the pictures the checks package builds from it.
type reportModel struct {
	h   *history.History
	res *verdict.Results
	tl  *checks.Timeline
	fl  *checks.Flights
	// from and to are the run as drawn (see runWindow).
	from, to int64
	// nodes are the rows drawn, in the timeline's order; hidden counts
	// the nodes left out past maxRows. index gives each node its style.
	nodes  []string
	hidden int
	index  map[string]int
	// types are the message types, most sent first; typeIdx their order.
	types   []string
	typeIdx map[string]int
	// violations are the false checks with an interval.
	violations []violation
	// locks are the lock's lanes of a mutex run, else nil.
	locks *checks.LockLanes
	// hoverLeft is how many more readings the hover texts may quote
	// (maxHoverReadings in all: evidence.go).
	hoverLeft int
}

// violation is one violation of a false check (each of its listed
// violations, or its interval when it lists none), saturated to the run.
type violation struct {
	check    string
	nth, of  int // which of the check's violations, from 1, and how many it lists
	from, to int64
	text     string // the violation's explanation
	id       string // the anchor of its magnified view
	zoom     bool   // it is short and among the first maxZooms: magnified
}

func newReportModel(res *verdict.Results, h *history.History) *reportModel {
	m := &reportModel{h: h, res: res, tl: checks.BuildTimeline(h), fl: checks.BuildFlights(h), index: map[string]int{}, hoverLeft: maxHoverReadings}
	m.from, m.to = runWindow(h)
	m.locks = checks.BuildLockLanes(h)
	for i, n := range m.tl.Nodes {
		if i >= maxRows {
			m.hidden = len(m.tl.Nodes) - maxRows
			break
		}
		m.nodes = append(m.nodes, n.Name)
		m.index[n.Name] = i
	}
	count := map[string]int{}
	for i := range m.fl.List {
		count[m.fl.Name(m.fl.List[i].Type)]++
	}
	for t := range count {
		m.types = append(m.types, t)
	}
	slices.SortFunc(m.types, func(a, b string) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	m.typeIdx = map[string]int{}
	for i, t := range m.types {
		m.typeIdx[t] = i
	}
	for _, name := range res.Order {
		c := res.Checks[name]
		if c.Valid != checks.False || c.Interval == nil {
			continue
		}
		list := c.Violations
		if len(list) == 0 {
			list = []checks.Violation{{Interval: *c.Interval, Explanation: c.Explanation}}
		}
		zooms := 0
		for k, v := range list {
			from := clampTime(v.Interval.From, m.from, m.to)
			to := clampTime(v.Interval.To, from, m.to)
			mv := violation{check: name, nth: k + 1, of: len(list), from: from, to: to, text: v.Explanation, id: violationID(name, k)}
			if m.isShort(mv) && zooms < maxZooms {
				mv.zoom = true
				zooms++
			}
			m.violations = append(m.violations, mv)
		}
	}
	return m
}

// maxZooms bounds the magnified views of one check: its first short
// violations; every violation is outlined on the timeline all the same.
const maxZooms = 6

// violationID is the anchor of a check's k-th violation (from 0): the
// first keeps the check's own, as before there were more.
func violationID(check string, k int) string {
	if k == 0 {
		return "zoom-" + anchor(check)
	}
	return fmt.Sprintf("zoom-%s-%d", anchor(check), k+1)
}

// styleOfNode is the style of a node, or of no known node (a leader
// named in a report that is not a node of the run).
func (m *reportModel) styleOfNode(name string) (nodeStyle, int) {
	if i, ok := m.index[name]; ok {
		return styleOf(i), i
	}
	return styleOf(-1), -1
}

// typeStyle is the colour of a message type: the palette's for the most
// sent types, grey for the rest (their arrows still carry the name).
func (m *reportModel) typeColour(mtype string) string {
	if i, ok := m.typeIdx[mtype]; ok && i < len(typeColours) {
		return typeColours[i]
	}
	return colOther
}

// typeMarker is the id of the arrowhead of a message type's colour.
func (m *reportModel) typeMarker(mtype string) string {
	if i, ok := m.typeIdx[mtype]; ok && i < len(typeColours) {
		return "ah-" + itoa(i)
	}
	return "ah-other"
}

// anchor makes a check's name safe as an id.
func anchor(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}
