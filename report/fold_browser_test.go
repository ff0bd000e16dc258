package report_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/report"
	"github.com/coupharness/coup/verdict"
)

// The page never scrolls sideways: a final read of 2,000 elements, in a
// check's evidence, its figures and its explanation, in the run's error
// and in a note, leaves the page as wide as the browser's window. A page of the browser's own loads the report in a
// frame as wide as a laptop's screen and writes down the report's scroll
// width and client width, which the test reads from the dumped DOM.
func TestLongValuesDoNotWidenThePage(t *testing.T) {
	bin := chromium(t)
	ms := int64(1e6)
	meta := &history.Meta{Scenario: "long-read", Algorithm: "a-set", Workload: "set", Nodes: []string{"n1", "n2"}, IDs: []int{1, 2},
		Checks: []string{"lost-writes"}, Expect: &history.Expect{Valid: true}}
	es := []history.Event{{Kind: history.KindMeta, Meta: meta},
		{Kind: history.KindProcess, Node: "n1", What: history.ProcStart, Incarnation: 1},
		{Kind: history.KindProcess, Node: "n2", What: history.ProcStart, Incarnation: 1}}
	var read []string
	for i := range 2000 {
		v := strconv.Itoa(100000 + i)
		read = append(read, v)
		at := int64(i/10)*ms + ms
		es = append(es, history.Event{Time: at, Kind: history.KindOp, Process: "c1", Type: history.OpInvoke, F: "add", Node: "n1", Value: v},
			history.Event{Time: at + ms/2, Kind: history.KindOp, Process: "c1", Type: history.OpOK, F: "add", Node: "n1", Value: v})
	}
	value := "[" + strings.Join(read, ",") + "]"
	final := history.Event{Time: 300 * ms, Kind: history.KindOp, Process: "c2", Type: history.OpOK, F: "read", Node: "n2", Value: value}
	es = append(es, history.Event{Time: 299 * ms, Kind: history.KindOp, Process: "c2", Type: history.OpInvoke, F: "read", Node: "n2"}, final,
		history.Event{Time: 310 * ms, Kind: history.KindEnd})
	for i := range es {
		es[i].Index = int64(i)
	}
	h, err := history.FromEvents(es)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verdict.Evaluate(h)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Checks["lost-writes"]
	c.Valid, c.Explanation = checks.False, "a made-up violation, to print a long value: "+value
	c.Evidence = append(c.Evidence, final)
	c.Figures = map[string]any{"final_read": value, "reads": []map[string]any{{"node": "n2", "value": value}}}
	res.Checks["lost-writes"] = c
	res.Error = "a made-up error, as a server's log line may be: " + value
	res.Notes = append(res.Notes, "a made-up note: "+value)

	dir := t.TempDir()
	if err := report.WriteFile(filepath.Join(dir, "report.html"), res, h); err != nil {
		t.Fatal(err)
	}
	measure := `<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="report.html" style="width:1280px;height:800px;border:0"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument.documentElement;
  document.body.setAttribute("data-width", d.scrollWidth + " " + d.clientWidth);
});
</script></body></html>`
	if err := os.WriteFile(filepath.Join(dir, "measure.html"), []byte(measure), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := runChromium(t, bin, "file://"+filepath.Join(dir, "measure.html"), "--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom")
	m := regexp.MustCompile(`data-width="([0-9]+) ([0-9]+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the measuring page wrote no width:\n%s", tail(dom, 500))
	}
	scroll, client := atoi(m[1]), atoi(m[2])
	if client < 1000 || scroll > client {
		t.Errorf("the page is %d pixels wide in a window of %d: it scrolls sideways", scroll, client)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
