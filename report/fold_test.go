package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/history"
)

// A short value is printed as it is; a long one shows its beginning and
// opens to the whole, escaped either way.
func TestFold(t *testing.T) {
	if got := string(fold("<b>x</b>")); got != "&lt;b&gt;x&lt;/b&gt;" {
		t.Errorf("fold of a short value = %q", got)
	}
	long := "<" + strings.Repeat("1234,", 100) + "0>"
	got := string(fold(long))
	if !strings.HasPrefix(got, `<details class="fold"><summary>&lt;1234,1234,`) || !strings.Contains(got, "(503 characters: show all)") {
		t.Errorf("fold of a long value begins %.120q", got)
	}
	if !strings.Contains(got, `<div class="folded">`+esc(long)+`</div>`) || strings.Contains(got, "<1234") {
		t.Errorf("the folded value is not whole, or not escaped")
	}
	huge := string(fold(strings.Repeat("x", 2*maxFolded)))
	if len(huge) > maxFolded+1000 || !strings.Contains(huge, "…</div>") {
		t.Errorf("a value of %d characters folds to %d", 2*maxFolded, len(huge))
	}
}

// In the page, a long value in a check's evidence and in its figures is
// folded, and the page's CSS wraps values anywhere.
func TestPageFoldsLongValues(t *testing.T) {
	h := setHistory(t)
	res, _ := render(t, h)
	read := "[" + strings.Repeat("1234,", 2000) + "0]"
	c := res.Checks[res.Order[0]]
	c.Evidence = append(c.Evidence, history.Event{Index: 99, Time: msT(601), Kind: history.KindOp, Process: "c1", Type: history.OpOK, F: "read", Node: "n1", Value: read})
	c.Figures = map[string]any{"final_read": read, "reads": []map[string]any{{"node": "n1", "value": read}}}
	c.Valid = checks.False
	res.Checks[res.Order[0]] = c
	var buf bytes.Buffer
	if err := Write(&buf, res, h); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, `<details class="fold">`); n != 3 {
		t.Errorf("%d folded values, want 3 (the evidence row, the figure, the figure's table cell)", n)
	}
	if !strings.Contains(page, `<td class="v"><details class="fold"><summary>read ok by c1 [1234,`) {
		t.Error("the evidence row's value is not folded")
	}
	if !strings.Contains(page, "overflow-wrap: anywhere") {
		t.Error("the page does not wrap long values")
	}
}
