package scenario

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

const goodSet = `command = ["./setnode"]
nodes = 3
duration = "500ms"
recovery = "400ms"

[workload]
kind = "set"
timeout = "100ms"
`

// A set workload gets the lost-writes check and final reads by every
// client, half the recovery window after the heal; lin-kv gets final
// reads only when its checks include lost-writes.
func TestSetDefaults(t *testing.T) {
	s, err := Parse("set.toml", goodSet)
	if err != nil {
		t.Fatal(err)
	}
	w := s.Workload
	if w.Clients != 3 || w.Rate != DefaultRate || w.FinalReads != FinalReadsAll || w.FinalAfter.D != 200*time.Millisecond {
		t.Errorf("workload %+v: want 3 clients, rate %v, final reads by all 200ms after the heal", w, DefaultRate)
	}
	if got := strings.Join(s.Checks.Run, ","); got != "lost-writes" || s.Kind() != "set" {
		t.Errorf("checks %s, kind %q: want lost-writes, set", got, s.Kind())
	}
	if readers, ok := w.FinalReaders(); !ok || readers != nil {
		t.Errorf("FinalReaders() = %v, %v; want every client", readers, ok)
	}
	one, err := Parse("set.toml", goodSet+"final_reads = \"c2\"\nfinal_after = \"50ms\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if readers, ok := one.Workload.FinalReaders(); !ok || !slices.Equal(readers, []string{"c2"}) || one.Workload.FinalAfter.D != 50*time.Millisecond {
		t.Errorf("FinalReaders() = %v, %v, after %s; want c2 after 50ms", readers, ok, one.Workload.FinalAfter.D)
	}
	back, err := Parse("set.toml", string(one.Encode("")))
	if err != nil {
		t.Fatal(err)
	}
	if w := back.Workload; w.Kind != WorkloadSet || w.FinalReads != "c2" || w.FinalAfter.D != 50*time.Millisecond {
		t.Errorf("encoded and parsed again: %+v\n%s", w, one.Encode(""))
	}
	for _, tt := range []struct {
		extra, want string
	}{
		{"", FinalReadsNone},
		{"\n[checks]\nrun = [\"kv-linearizable\", \"lost-writes\"]\n", FinalReadsAll},
	} {
		kv, err := Parse("kv.toml", goodKV+tt.extra)
		if err != nil {
			t.Fatal(err)
		}
		if kv.Workload.FinalReads != tt.want {
			t.Errorf("lin-kv with %q: final reads %q, want %q", tt.extra, kv.Workload.FinalReads, tt.want)
		}
	}
	// Machines of one's own, and real servers with a client, take it.
	if _, err := ParseMachine("set.toml", strings.Replace(goodSet, `command = ["./setnode"]`, "", 1)); err != nil {
		t.Errorf("a machine of one's own: %v", err)
	}
	if _, err := Parse("set.toml", strings.Replace(goodSet, `command = ["./setnode"]`, "", 1)+"\n[server]\npreset = \"etcd\"\nclient = \"etcd\"\n"); err != nil {
		t.Errorf("etcd: %v", err)
	}
}

func TestBadSetScenarios(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		line  int
		field string
		msg   string
	}{
		{"a built-in algorithm", strings.Replace(goodSet, `command = ["./setnode"]`, `algorithm = "bully"`, 1), 7, "workload.kind", "served by a node program of your own (command)"},
		{"keys", goodSet + "keys = 3\n", 9, "workload.keys", `only for kind = "lin-kv" (this workload is "set")`},
		{"final reads for echo", strings.Replace(goodSet, `"set"`, `"echo"`, 1) + "final_reads = \"all\"\n", 9, "workload.final_reads", `only for kind = "lin-kv" or "set"`},
		{"final_after for a lock", strings.Replace(goodSet, `"set"`, `"mutex"`, 1) + "final_after = \"1ms\"\n", 9, "workload.final_after", `only for kind = "lin-kv" or "set"`},
		{"a reader that is no client", goodSet + "final_reads = \"c4\"\n", 9, "workload.final_reads", `"c4" names no client: this workload has c1 to c3`},
		{"a reader that is a node", goodSet + "final_reads = \"n1\"\n", 9, "workload.final_reads", `say "all" (every client), "none", or one client, "c1" to "c3"`},
		{"a reader with a zero", goodSet + "final_reads = \"c01\"\n", 9, "workload.final_reads", `or one client`},
		{"final reads after the run", goodSet + "final_after = \"400ms\"\n", 9, "workload.final_after", "not within the recovery window (400ms)"},
		{"no recovery for the final reads", strings.Replace(goodSet, `recovery = "400ms"`, `recovery = "0s"`, 1), 4, "recovery", "the final reads (final_reads = \"all\") come after the heal"},
		{"lost-writes without final reads", goodSet + "final_reads = \"none\"\n", 9, "workload.final_reads", "lost-writes needs the final reads"},
		{"lost-writes for a lock", strings.Replace(goodKV, `"lin-kv"`, `"mutex"`, 1) + "\n[checks]\nrun = [\"lost-writes\"]\n", 11, "checks.run", `lost-writes judges a set or lin-kv workload's writes, and this workload is "mutex"`},
		{"a set against servers without a client", goodServer + "\n[workload]\nkind = \"set\"\n", 25, "workload.kind", "a set workload against real servers needs their client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Line != tt.line || e.Field != tt.field || !strings.Contains(e.Error(), tt.msg) {
				t.Errorf("got %q (line %d, field %q), want line %d, field %q, message with %q", e, e.Line, e.Field, tt.line, tt.field, tt.msg)
			}
		})
	}
}

// A set workload has clients whose adds may be in flight: coup explore
// may aim a fault at one.
func TestSetVocabularyHasInFlight(t *testing.T) {
	s, err := Parse("set.toml", goodSet)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Vocabulary(); !slices.Contains(v.Triggers, TriggerInFlight) {
		t.Errorf("triggers %v, want %s among them", v.Triggers, TriggerInFlight)
	}
}
