package scenario

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/nemesis"
)

// A bandwidth fault is read with its rate and burst, and written back
// the same; a bad one is refused at its line, naming the key.
func TestBandwidthFault(t *testing.T) {
	const base = "nodes = 3\nalgorithm = \"bully\"\n"
	s, err := Parse("bw.toml", base+"[[faults]]\nkind = \"bandwidth\"\nrate = 50000\nburst = 1500\ntarget = \"n3\"\ndirection = \"in\"\n")
	if err != nil {
		t.Fatal(err)
	}
	f := s.NemesisFaults()[0]
	if f.Kind != nemesis.Bandwidth || f.Rate != 50000 || f.Burst != 1500 || f.Direction != nemesis.In {
		t.Errorf("read as %+v", f)
	}
	if b := string(s.Encode("")); !strings.Contains(b, "rate = 50000") || !strings.Contains(b, "burst = 1500") {
		t.Errorf("written back without its rate or burst:\n%s", b)
	}
	for _, c := range []struct{ name, fault, want string }{
		{"no rate", "kind = \"bandwidth\"\n", "bad.toml:3:1: faults[0].rate: a bandwidth fault needs rate"},
		{"rate too low", "kind = \"bandwidth\"\nrate = 10\n", "faults[0].rate: a bandwidth fault needs rate, the bytes a second each link carries, at least 100, got 10"},
		{"negative burst", "kind = \"bandwidth\"\nrate = 1e6\nburst = -1\n", "faults[0].burst: bytes an idle link sends at once: not negative"},
		{"burst on a loss", "kind = \"loss\"\nburst = 10\n", "faults[0].burst: not a parameter of a loss fault"},
	} {
		_, err := Parse("bad.toml", base+"[[faults]]\n"+c.fault)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "bad.toml:") {
			t.Errorf("%s: error %v, want one at bad.toml:line:col saying %q", c.name, err, c.want)
		}
	}
}

// The vocabulary takes bandwidth: the kind, and bounds of its rate (the
// defaults, or the table's); bounds below the least rate are refused.
func TestExploreBandwidth(t *testing.T) {
	const base = "nodes = 3\nalgorithm = \"bully\"\n[explore]\nkinds = [\"bandwidth\"]\n"
	s, err := Parse("x.toml", base+"bandwidth = [2000, 50000]\n")
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Vocabulary(); v.Kinds[0] != nemesis.Bandwidth || v.Bandwidth != [2]float64{2000, 50000} {
		t.Errorf("vocabulary %v %v", v.Kinds, v.Bandwidth)
	}
	if b := string(s.Encode("")); !strings.Contains(b, "bandwidth = [2000.0, 50000.0]") {
		t.Errorf("written back without its bounds:\n%s", b)
	}
	if s, err = Parse("x.toml", base); err != nil || s.Vocabulary().Bandwidth != defaultBandwidth {
		t.Errorf("defaults: %v, %v", err, s.Vocabulary().Bandwidth)
	}
	if _, err := Parse("bad.toml", base+"bandwidth = [10, 50000]\n"); err == nil || !strings.Contains(err.Error(), "explore.bandwidth: must be more than 100, got 10") {
		t.Errorf("bounds below the least rate: %v", err)
	}
}
