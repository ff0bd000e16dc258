package sim

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateGolden rewrites testdata/catalogue.hashes from this build: go test
// ./sim -run CatalogueHashes -update. Only a change that means to change
// simulated histories may do it, and its commit says so.
var updateGolden = flag.Bool("update", false, "rewrite the golden hashes of the catalogue's histories")

const goldenFile = "testdata/catalogue.hashes"

// goldenSeeds is how many seeds of each scenario the golden file holds,
// from the scenario's own: the benchmark's five.
const goldenSeeds = 5

// The catalogue's simulated histories hash as they did when the golden
// file was written: every seed of every simulated scenario, through
// Simulate as coup sim runs it, and once more with the other two
// strategies. Speed work on the simulator must leave every history as it
// was, event for event and field for field.
func TestCatalogueHashes(t *testing.T) {
	var got []string
	for _, sc := range catalogue(t) {
		type run struct {
			label string
			seed  int64
			opts  Options
		}
		var runs []run
		for i := range int64(goldenSeeds) {
			runs = append(runs, run{"random", sc.Seed + i, Options{Hash: true}})
		}
		for _, st := range []Strategy{{Name: PCT, Depth: DefaultDepth}, {Name: Bias}} {
			runs = append(runs, run{st.String(), sc.Seed, Options{Hash: true, Strategy: st}})
		}
		for _, r := range runs {
			out, err := Simulate(sc, r.seed, r.opts)
			if err != nil {
				t.Fatalf("%s seed %d %s: %v", sc.Name, r.seed, r.label, err)
			}
			got = append(got, fmt.Sprintf("%s %d %s %s", sc.Name, r.seed, r.label, out.Hash))
			Recycle(out)
		}
	}
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d hashes to %s", len(got), goldenFile)
		return
	}
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			want[line[:i]] = line[i+1:]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Errorf("%d runs, the golden file has %d", len(got), len(want))
	}
	for _, line := range got {
		i := strings.LastIndexByte(line, ' ')
		run, hash := line[:i], line[i+1:]
		switch w, ok := want[run]; {
		case !ok:
			t.Errorf("%s: not in the golden file", run)
		case w != hash:
			t.Errorf("%s: history %s, golden %s", run, hash, w)
		}
	}
}
