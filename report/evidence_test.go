package report

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/coupharness/coup/history"
)

// TestReadingsOnThePage: on a real server's history of two leaders whose
// reports carry what they were read from (checks' fixture
// etcd-two-leaders-evidence), the two-leaders check's evidence table
// quotes each claim's log line and the failed poll that cut one short,
// each belief's hover text in the timeline quotes its reading, and the
// unknown belief is drawn as unknown, not as no leader.
func TestReadingsOnThePage(t *testing.T) {
	h, err := history.ReadFile("../checks/testdata/fixtures/etcd-two-leaders-evidence.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, page := render(t, h)
	claim := `n1.etcd.log:57: {"level":"info","ts":"2026-12-02T10:00:01.204Z","logger":"raft","caller":"etcdserver/zap_raft.go:77","msg":"raft.node: 8e9e05c52164694d elected leader 8e9e05c52164694d at term 2"}`
	other := `n2.etcd.log:88: {"level":"info","ts":"2026-12-02T10:00:04.512Z"`
	poll := `http://10.77.0.1:2379/v3/maintenance/status answered: Post "http://10.77.0.1:2379/v3/maintenance/status": context deadline exceeded`

	check := section(t, page, `<div class="check" id="check-two-leaders">`, `<div class="check" id="check-agreement">`)
	table := section(t, check, `<table class="evidence">`, `</table>`)
	for _, want := range []string{claim, other, poll} {
		if !strings.Contains(table, html.EscapeString(want)) {
			t.Errorf("the evidence table does not quote %q:\n%s", want, table)
		}
	}
	if !strings.Contains(table, "its belief is not known (a poll failed or timed out): no claim") {
		t.Errorf("the evidence table does not say n1's belief was unknown:\n%s", table)
	}

	timeline := section(t, page, `<svg id="timeline-svg"`, `</svg>`)
	titles := regexp.MustCompile(`(?s)<g class="span"><title>(.*?)</title>`).FindAllStringSubmatch(timeline, -1)
	hover := map[string]bool{}
	for _, m := range titles {
		hover[html.UnescapeString(m[1])] = true
	}
	for _, want := range []string{
		"n1 believes it is the leader from 1.204s to 4.700s\nread from " + claim,
		"n1's belief is unknown (a poll failed or timed out) from 4.700s to 6.231s\nread from " + poll[:strings.Index(poll, ": context")] + ": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
	} {
		if !hover[want] {
			t.Errorf("no span's hover text is %q; they are:\n%v", want, hover)
		}
	}
	if strings.Contains(timeline, "n1 believes in no leader from 4.700s") {
		t.Errorf("the unknown belief is drawn as no leader")
	}
}

// section is the part of page from the first from to the first to after
// it.
func section(t *testing.T, page, from, to string) string {
	t.Helper()
	i := strings.Index(page, from)
	if i < 0 {
		t.Fatalf("the page has no %q", from)
	}
	j := strings.Index(page[i:], to)
	if j < 0 {
		t.Fatalf("the page has no %q after %q", to, from)
	}
	return page[i : i+j+len(to)]
}
