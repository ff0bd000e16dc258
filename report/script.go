package report

import (
	"encoding/json"
	"html/template"

	"github.com/coupharness/coup/history"
)

// The page's one script lets a reader narrow the space-time diagram to
// any window: drag across a diagram (or click for an eighth of it around
// the click), or open the page with #t=FROM-TO (seconds) in its address.
// It draws the window from data the page embeds, as the Go code draws the
// preset windows, with fewer frills; everything else on the page is drawn
// without it. The data holds at most maxScriptData copies of messages;
// past that the script says so and the preset windows remain.

// scriptData is what the script reads, as JSON in the page. Times are
// nanoseconds; rows index Rows.
type scriptData struct {
	From    int64    `json:"from"`
	To      int64    `json:"to"`
	Rows    []string `json:"rows"`
	Types   []string `json:"types"`
	Colours []string `json:"colours"`
	// Flights are [send, end, from row, to row, type (-1: another), flags]
	// with flags 1 dropped, 2 duplicate, 4 corrupted, 8 rejected, 16
	// dropped near the receiver.
	Flights [][6]int64 `json:"flights"`
	// Omitted counts the copies left out past maxScriptData.
	Omitted int `json:"omitted"`
	// Lives are [row, from, to, paused]: when each node was up.
	Lives [][4]int64 `json:"lives"`
	// Marks are [row, time, kind]: 0 a crash, 1 a restart, 2 a process's
	// own exit.
	Marks      [][3]int64   `json:"marks"`
	Faults     []scriptSpan `json:"faults"`
	Violations []scriptSpan `json:"violations"`
	GST        int64        `json:"gst"`
	DetailCap  int          `json:"detail_cap"`
}

// scriptSpan is a labelled interval.
type scriptSpan struct {
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Label string `json:"label"`
}

// scriptJSON returns the script's data, safe inside a script element
// (encoding/json escapes <, > and &).
func (m *reportModel) scriptJSON() template.JS {
	rows, rowOf := m.stRows()
	d := scriptData{From: m.from, To: m.to, Rows: rows, DetailCap: detailCap, GST: m.h.Meta.GST,
		Types: []string{}, Colours: []string{}, Flights: [][6]int64{}, Lives: [][4]int64{}, Marks: [][3]int64{},
		Faults: []scriptSpan{}, Violations: []scriptSpan{}}
	for i, t := range m.types {
		if i == len(typeColours) {
			break
		}
		d.Types = append(d.Types, short(t, 14))
		d.Colours = append(d.Colours, typeColours[i])
	}
	for i := range m.fl.List {
		f := &m.fl.List[i]
		if len(d.Flights) == maxScriptData {
			d.Omitted = len(m.fl.List)
			break
		}
		r0, r1 := rowOf(m.fl.Name(f.Src)), rowOf(m.fl.Name(f.Dest))
		if r0 < 0 || r1 < 0 {
			continue
		}
		s, t := m.flightTimes(f)
		typ := int64(-1)
		if k, ok := m.typeIdx[m.fl.Name(f.Type)]; ok && k < len(typeColours) {
			typ = int64(k)
		}
		var flags int64
		if f.Dropped {
			flags |= 1
			if dropDepth(m.fl.Name(f.Reason)) > 0.5 {
				flags |= 16
			}
		}
		if f.Duplicate {
			flags |= 2
		}
		if f.Corrupted {
			flags |= 4
		}
		if f.Rejected {
			flags |= 8
		}
		d.Flights = append(d.Flights, [6]int64{s, t, int64(r0), int64(r1), typ, flags})
	}
	if d.Omitted > 0 {
		d.Flights = [][6]int64{}
	}
	for i := range m.nodes {
		var open *[4]int64
		for _, s := range m.tl.Nodes[i].Spans {
			paused := int64(0)
			if s.Paused {
				paused = 1
			}
			if open != nil && open[2] == s.From && open[3] == paused {
				open[2] = s.To
				continue
			}
			if len(d.Lives) >= maxScriptData {
				break
			}
			d.Lives = append(d.Lives, [4]int64{int64(i), s.From, s.To, paused})
			open = &d.Lives[len(d.Lives)-1]
		}
		for _, mk := range m.tl.Nodes[i].Marks {
			if len(d.Marks) >= maxScriptData {
				break
			}
			switch {
			case mk.What == history.ProcCrash:
				d.Marks = append(d.Marks, [3]int64{int64(i), mk.Time, 0})
			case mk.What == history.ProcExit || mk.What == history.ProcPartExit:
				d.Marks = append(d.Marks, [3]int64{int64(i), mk.Time, 2})
			case mk.What == history.ProcStart && mk.Restart:
				d.Marks = append(d.Marks, [3]int64{int64(i), mk.Time, 1})
			}
		}
	}
	for _, f := range m.tl.Faults {
		if len(d.Faults) >= maxScriptData {
			break
		}
		to := f.To
		if to < 0 {
			to = f.From
		}
		label := f.What
		if len(f.Nodes) > 0 {
			label += " " + faultTargets(f.Nodes, m.h.Meta.Nodes)
		}
		d.Faults = append(d.Faults, scriptSpan{From: f.From, To: to, Label: short(label, 28)})
	}
	for _, v := range m.violations {
		d.Violations = append(d.Violations, scriptSpan{From: v.from, To: v.to, Label: v.check})
	}
	b, err := json.Marshal(d)
	if err != nil {
		return template.JS("null")
	}
	return template.JS(b)
}

// reportScript draws a window of the space-time diagram on request. It
// only ever sets text and attributes, never markup, so nothing from the
// history is parsed as HTML.
const reportScript = `
(function () {
  "use strict";
  var el = document.getElementById("coup-data");
  var box = document.getElementById("spacetime-windows");
  if (!el || !box) { return; }
  var d = JSON.parse(el.textContent);
  if (!d) { return; }
  ["rows", "types", "colours", "flights", "lives", "marks", "faults", "violations"].forEach(function (k) { d[k] = d[k] || []; });
  var NS = "http" + "://www.w3.org/2000/svg";
  var LEFT = 80, WIDTH = 940, RIGHT = 24, TOP = 34, AXIS = 30;
  var rowH = Math.max(14, Math.min(34, Math.floor(420 / Math.max(d.rows.length, 1))));
  function add(parent, name, attrs, text) {
    var n = document.createElementNS(NS, name);
    for (var k in attrs) { n.setAttribute(k, attrs[k]); }
    if (text !== undefined) { n.textContent = text; }
    parent.appendChild(n);
    return n;
  }
  function secs(t) { return (t / 1e9).toFixed(3) + "s"; }
  function draw(from, to) {
    var span = to - from;
    var height = TOP + d.rows.length * rowH + AXIS;
    var svg = document.createElementNS(NS, "svg");
    var w = LEFT + WIDTH + RIGHT;
    var attrs = {"class": "spacetime custom", width: w, height: height, viewBox: "0 0 " + w + " " + height,
      "data-from": from, "data-to": to, "data-left": LEFT, "data-width": WIDTH, role: "img"};
    for (var k in attrs) { svg.setAttribute(k, attrs[k]); }
    function x(t) { return LEFT + (Math.max(from, Math.min(to, t)) - from) / span * WIDTH; }
    function xr(t) { return LEFT + (t - from) / span * WIDTH; }
    function mid(r) { return TOP + r * rowH + rowH / 2; }
    var bottom = TOP + d.rows.length * rowH;
    var g, i;
    var lastLabel = -1e9;
    d.faults.forEach(function (f) {
      if (f.to < from || f.from > to) { return; }
      g = add(svg, "g", {"class": "fault"});
      add(g, "title", {}, "nemesis: " + f.label + " from " + secs(f.from) + " to " + secs(f.to));
      add(g, "rect", {x: x(f.from), y: TOP - 4, width: Math.max(x(f.to) - x(f.from), 1), height: bottom - TOP + 8,
        fill: "` + colNemesis + `", "fill-opacity": 0.28, stroke: "` + colNemesisStroke + `", "stroke-dasharray": "3,2"});
      if (x(f.from) - lastLabel >= 90) {
        lastLabel = x(f.from);
        add(g, "text", {x: x(f.from) + 2, y: TOP - 8, fill: "` + colNemesisText + `", "font-size": 10}, f.label);
      }
    });
    d.violations.forEach(function (v) {
      if (v.to < from || v.from > to) { return; }
      g = add(svg, "g", {"class": "violation"});
      add(g, "title", {}, v.label + ": " + secs(v.from) + " to " + secs(v.to));
      add(g, "rect", {x: x(v.from) - 1, y: TOP - 2, width: Math.max(x(v.to) - x(v.from), 3), height: bottom - TOP + 4,
        fill: "` + colViolation + `", "fill-opacity": 0.15, stroke: "` + colViolation + `", "stroke-width": 1.5});
    });
    d.rows.forEach(function (name, r) {
      add(svg, "text", {"class": "row", x: LEFT - 8, y: mid(r), "text-anchor": "end", "dominant-baseline": "middle"}, name);
      add(svg, "line", {x1: LEFT, y1: mid(r), x2: LEFT + WIDTH, y2: mid(r), stroke: "#bbb", "stroke-dasharray": "1,3"});
    });
    d.lives.forEach(function (l) {
      if (l[2] < from || l[1] > to) { return; }
      if (l[3]) {
        add(svg, "rect", {x: x(l[1]), y: mid(l[0]) - 4, width: Math.max(x(l[2]) - x(l[1]), 1), height: 8, fill: "url(#paused)", stroke: "#555", "stroke-width": 0.5});
      } else {
        add(svg, "line", {"class": "life", x1: x(l[1]), y1: mid(l[0]), x2: x(l[2]), y2: mid(l[0]), stroke: "#444", "stroke-width": 1.6});
      }
    });
    var inside = d.flights.filter(function (f) { return f[1] >= from && f[0] <= to; });
    if (inside.length > d.detail_cap) {
      add(svg, "text", {x: LEFT + WIDTH / 2, y: TOP + 12, "text-anchor": "middle", "font-size": 12, fill: "#000"},
        inside.length + " copies of messages in this window: too many to draw one by one; drag across a narrower part of a diagram");
    } else {
      var taken = {};
      inside.forEach(function (f) {
        var colour = f[4] >= 0 ? d.colours[f[4]] : "` + colOther + `";
        var x0 = xr(f[0]), x1 = xr(f[1]), y0 = mid(f[2]), y1 = mid(f[3]);
        if (f[5] & 1) { y1 = y0 + (y1 - y0) * ((f[5] & 16) ? 0.85 : 0.5); }
        var cx0 = Math.max(LEFT, Math.min(x0, LEFT + WIDTH)), cx1 = Math.max(LEFT, Math.min(x1, LEFT + WIDTH));
        function at(xx) { return y0 + (y1 - y0) * (xx - x0) / (x1 - x0); }
        var cy0 = cx0 === x0 ? y0 : at(cx0), cy1 = cx1 === x1 ? y1 : at(cx1);
        var type = f[4] >= 0 ? d.types[f[4]] : "";
        g = add(svg, "g", {"class": "msg" + ((f[5] & 1) ? " dropped" : "")});
        add(g, "title", {}, (type || "message") + " " + d.rows[f[2]] + "→" + d.rows[f[3]] + ": sent " + secs(f[0]) +
          ((f[5] & 1) ? ", dropped " : ", delivered ") + secs(f[1]) + ((f[5] & 4) ? ((f[5] & 8) ? "; corrupted and rejected" : "; corrupted, not rejected") : ""));
        var line = {x1: cx0, y1: cy0, x2: cx1, y2: cy1, stroke: colour, "stroke-width": 1.3};
        if (f[5] & 1) { line["stroke-dasharray"] = "4,3"; } else if (f[5] & 2) { line["stroke-dasharray"] = "1.5,2"; }
        if (!(f[5] & 1) && cx1 === x1) { line["marker-end"] = "url(#ah-" + (f[4] >= 0 ? f[4] : "other") + ")"; }
        add(g, "line", line);
        if (cx1 === x1 && (f[5] & 1)) {
          add(g, "path", {"class": "drop", d: "M" + (cx1 - 3.5) + " " + (cy1 - 3.5) + " l7 7 m0 -7 l-7 7", stroke: "` + colViolation + `", "stroke-width": 2});
        } else if (cx1 === x1 && (f[5] & 4)) {
          add(g, "circle", {cx: cx1, cy: cy1, r: 4.5, fill: (f[5] & 8) ? "#fff" : "` + colViolation + `", stroke: "` + colViolation + `", "stroke-width": 1.6});
        }
        var lx = (cx0 + cx1) / 2, ly = (cy0 + cy1) / 2 - 3, lw = type.length * 5.6 + 4;
        lx = Math.max(LEFT + lw / 2, Math.min(lx, LEFT + WIDTH - lw / 2));
        var key = Math.floor(lx / 40) + ":" + Math.floor(ly / 10);
        var long = Math.hypot(cx1 - cx0, cy1 - cy0) >= 24;
        if (type && long && !taken[key]) {
          taken[key] = true;
          add(g, "text", {"class": "mtype", x: lx, y: ly, "text-anchor": "middle", "font-size": 9, fill: colour, stroke: "#fff", "stroke-width": 3, "paint-order": "stroke"}, type);
        }
      });
    }
    d.marks.forEach(function (mk) {
      if (mk[1] < from || mk[1] > to) { return; }
      var xx = x(mk[1]), yy = mid(mk[0]);
      if (mk[2] === 0) {
        add(svg, "path", {"class": "mark", d: "M" + (xx - 3.5) + " " + (yy - 3.5) + " l7 7 m0 -7 l-7 7", stroke: "` + colViolation + `", "stroke-width": 2.2});
      } else if (mk[2] === 2) {
        add(svg, "circle", {"class": "mark mark-exit", cx: xx, cy: yy, r: 5.5, fill: "` + colExit + `", stroke: "#fff", "stroke-width": 0.8});
        add(svg, "text", {"class": "mark", x: xx, y: yy + 3.5, "text-anchor": "middle", "font-size": 9, "font-weight": "bold", fill: "#fff"}, "!");
      } else {
        add(svg, "path", {"class": "mark", d: "M" + xx + " " + (yy - 5) + " l8 5 l-8 5 z", fill: "#007a3d"});
      }
    });
    if (d.gst > from && d.gst < to) {
      add(svg, "line", {x1: x(d.gst), y1: TOP - 4, x2: x(d.gst), y2: bottom + 4, stroke: "#000", "stroke-dasharray": "6,3", "stroke-width": 1.5});
      add(svg, "text", {x: x(d.gst) + 3, y: bottom - 3, "font-size": 10, "font-weight": "bold"}, "GST");
    }
    var y = bottom + 6;
    add(svg, "line", {x1: LEFT, y1: y, x2: LEFT + WIDTH, y2: y, stroke: "#888"});
    var raw = span / 8, pow = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1)))), step = 10 * pow;
    [1, 2, 5].some(function (m) { if (m * pow >= raw) { step = m * pow; return true; } return false; });
    var decimals = 0;
    for (var s = 1e9; s > step && decimals < 9; s /= 10) { decimals++; }
    for (i = 0; i < 24; i++) {
      var t = Math.ceil(from / step) * step + i * step;
      if (t > to) { break; }
      add(svg, "line", {x1: x(t), y1: y, x2: x(t), y2: y + 4, stroke: "#888"});
      add(svg, "text", {x: x(t), y: y + 16, "text-anchor": "middle", fill: "#555", "font-size": 10}, (t / 1e9).toFixed(decimals) + "s");
    }
    return {svg: svg, count: inside.length};
  }
  function show(from, to) {
    from = Math.max(d.from, Math.min(from, d.to));
    to = Math.max(from + 1, Math.min(to, d.to));
    var radio = document.getElementById("stw-custom");
    var pane = document.getElementById("stp-custom");
    var label = document.getElementById("stl-custom");
    radio.disabled = false;
    label.hidden = false;
    label.textContent = "your window: " + secs(from) + "–" + secs(to);
    var out = draw(from, to);
    while (pane.firstChild) { pane.removeChild(pane.firstChild); }
    var p = document.createElement("p");
    p.className = "note";
    p.textContent = secs(from) + " to " + secs(to) + ": " + out.count + " copies of messages. Drag across the diagram to narrow it further.";
    pane.appendChild(p);
    pane.appendChild(out.svg);
    brush(out.svg);
    radio.checked = true;
    if (history.replaceState) { history.replaceState(null, "", "#t=" + (from / 1e9) + "-" + (to / 1e9)); }
  }
  function brush(svg) {
    var start = null, sel = null;
    function time(ev) {
      var r = svg.getBoundingClientRect();
      var vb = svg.viewBox.baseVal;
      var px = (ev.clientX - r.left) * vb.width / r.width;
      var from = +svg.getAttribute("data-from"), to = +svg.getAttribute("data-to");
      return {px: px, t: from + (Math.max(LEFT, Math.min(px, LEFT + WIDTH)) - LEFT) / WIDTH * (to - from)};
    }
    svg.addEventListener("mousedown", function (ev) {
      start = time(ev);
      sel = add(svg, "rect", {"class": "brush", x: start.px, y: 0, width: 0, height: svg.viewBox.baseVal.height, fill: "#0072B2", "fill-opacity": 0.15});
      ev.preventDefault();
    });
    svg.addEventListener("mousemove", function (ev) {
      if (!start) { return; }
      var now = time(ev);
      sel.setAttribute("x", Math.min(start.px, now.px));
      sel.setAttribute("width", Math.abs(now.px - start.px));
    });
    window.addEventListener("mouseup", function (ev) {
      if (!start) { return; }
      var end = time(ev), s = start;
      start = null;
      sel.parentNode.removeChild(sel);
      var from = +svg.getAttribute("data-from"), to = +svg.getAttribute("data-to");
      if (Math.abs(end.px - s.px) < 4) {
        var w = (to - from) / 8;
        show(s.t - w / 2, s.t + w / 2);
      } else {
        show(Math.min(s.t, end.t), Math.max(s.t, end.t));
      }
    });
  }
  var hint = document.getElementById("spacetime-hint");
  if (d.omitted > 0) {
    if (hint) { hint.textContent = "This history has " + (d.flights.length + d.omitted) + " copies of messages, more than the page embeds for drawing windows of your own; use the windows above."; hint.hidden = false; }
  } else {
    box.querySelectorAll("svg.spacetime").forEach(brush);
    if (hint) { hint.hidden = false; }
    var m = /^#t=([0-9.e+]+)-([0-9.e+]+)$/.exec(location.hash);
    if (m) { show(parseFloat(m[1]) * 1e9, parseFloat(m[2]) * 1e9); }
  }
  document.body.setAttribute("data-script", "ready");
})();
`
