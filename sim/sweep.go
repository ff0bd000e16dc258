package sim

import (
	"fmt"
	"sync"

	"github.com/coupharness/coup/scenario"
)

// Seeds runs run for every seed in [from, from+n) on workers goroutines and
// calls report with each seed's outcome, in seed order, from the calling
// goroutine. When report returns false the sweep stops: seeds under way
// are finished but not reported. At most a few seeds per worker are held
// waiting for their turn, so a sweep's memory does not grow with n.
func Seeds(from int64, n, workers int, run func(seed int64) (*Outcome, error), report func(seed int64, out *Outcome, err error) bool) {
	if workers < 1 {
		workers = 1
	}
	type result struct {
		seed int64
		out  *Outcome
		err  error
	}
	window := 4 * workers
	slots := make(chan struct{}, window)
	jobs := make(chan int64)
	results := make(chan result, window)
	stop := make(chan struct{})
	go func() { // feeder: a seed starts only when a slot is free
		defer close(jobs)
		for i := 0; i < n; i++ {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			select {
			case jobs <- from + int64(i):
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range jobs {
				out, err := run(seed)
				results <- result{seed, out, err}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	waiting := map[int64]result{}
	next, stopped := from, false
	for r := range results {
		if stopped {
			continue // drain: seeds under way finish, unreported
		}
		waiting[r.seed] = r
		for {
			w, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			next++
			<-slots
			if !report(w.seed, w.out, w.err) {
				stopped = true
				close(stop) // the feeder stops; the workers finish their seeds
				break
			}
		}
	}
}

// Twice simulates a scenario twice with the same seed, each time hashing
// its history; the outcome is the first run's, and Rehash the second's
// hash. The two hashes differ only if something in the run is not
// determined by the seed.
func Twice(sc *scenario.Scenario, seed int64, opts Options) (*Outcome, error) {
	opts.Hash = true
	first, err := Simulate(sc, seed, opts)
	if err != nil {
		return nil, err
	}
	opts.Store = ""
	second, err := Simulate(sc, seed, opts)
	if err != nil {
		return nil, fmt.Errorf("second run: %w", err)
	}
	first.Rehash = second.Hash
	Recycle(second)
	return first, nil
}
