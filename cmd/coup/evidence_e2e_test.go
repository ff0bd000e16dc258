package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPrintsReadings: coup check on a real server's history of two
// leaders prints, under the verdict, the log lines and the poll answer
// the violation's claims were read from (checks' fixture
// etcd-two-leaders-evidence), so that a person needs no log to check it.
func TestCheckPrintsReadings(t *testing.T) {
	file, err := filepath.Abs("../../checks/testdata/fixtures/etcd-two-leaders-evidence.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := coup(t, "check", file)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (the two leaders are expected)\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"  two-leaders violation 1 of 1 (n1, n2, 4.512s to 4.700s) was read from:\n",
		`    event 4 at 1.204s, n1 believes it is the leader in term 2: n1.etcd.log:57: {"level":"info","ts":"2026-12-02T10:00:01.204Z","logger":"raft","caller":"etcdserver/zap_raft.go:77","msg":"raft.node: 8e9e05c52164694d elected leader 8e9e05c52164694d at term 2"}` + "\n",
		`    event 9 at 4.512s, n2 believes it is the leader in term 3: n2.etcd.log:88: {"level":"info"`,
		`    event 11 at 4.700s, n1's belief is unknown: http://10.77.0.1:2379/v3/maintenance/status answered: Post "http://10.77.0.1:2379/v3/maintenance/status": context deadline exceeded`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("coup check does not print %q:\n%s", want, r.stdout)
		}
	}
}
