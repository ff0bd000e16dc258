package toy_test

import (
	"testing"

	"github.com/coupharness/coup"

	"example.com/toy"
)

func scenario(t *testing.T) *coup.Scenario {
	sc, err := coup.Load("partition.toml")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestFixed passes: a fixed leader is never two.
func TestFixed(t *testing.T) {
	coup.Test(t, scenario(t), toy.Fixed, coup.Options{Seeds: 100})
}

// TestHighest fails: the sweep finds two leaders, and says how to replay
// the seed.
func TestHighest(t *testing.T) {
	coup.Test(t, scenario(t), toy.Highest, coup.Options{Seeds: 100})
}
