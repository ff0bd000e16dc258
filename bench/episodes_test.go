package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// Runs per hour are the runs over the wall time; the table gives both
// ways, their ratio, and what was not judged or skipped.
func TestPrintEpisodes(t *testing.T) {
	c := EpisodeCase{Kind: "etcd", Runs: 5, Wall: [episodeWays]time.Duration{50 * time.Second, 40 * time.Second}, Clusters: 2,
		Failed: [episodeWays][]string{nil, {"not started: etcd exited"}}}
	if got := c.PerHour(Fresh); math.Abs(got-360) > 1e-9 {
		t.Errorf("fresh: %g runs per hour, want 360", got)
	}
	if got := c.PerHour(Episodes); math.Abs(got-450) > 1e-9 {
		t.Errorf("episodes: %g runs per hour, want 450", got)
	}
	r := &Results{Episodes: []EpisodeCase{c, {Kind: "zookeeper", Skipped: "java is not installed"}}}
	var b bytes.Buffer
	r.printEpisodes(&b)
	out := b.String()
	for _, want := range []string{
		"360 (10s)", "450 (8s) (1 of 5 not judged)", "1.25×",
		"zookeeper, runs per hour  not measured: java is not installed",
		"etcd: the episodes started 2 clusters", "etcd, episodes: not started: etcd exited",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}
