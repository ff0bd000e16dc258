package servers

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/coupharness/coup/explore"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/verdict"
)

// NewRunner is the real-server driver as the search room sees it: each
// run starts a fresh cluster (Run) with opts, into the store, and its
// history is read back.
func NewRunner(opts Options) explore.Runner {
	return &explore.Stored{Driver: "servers", Once: func(ctx context.Context, sc *scenario.Scenario) (*verdict.Results, string, error) {
		return Run(ctx, sc, opts)
	}}
}

// EpisodeRunner runs a scenario of real servers as an episode on a
// long-lived cluster (Session), into the store, and reads its history
// back. Each run takes a session no other run is using, or a new one: a
// campaign of --workers N keeps up to N clusters.
type EpisodeRunner struct {
	// Options are every session's (the store, where progress goes).
	Options Options
	// Notes, when set, is told when a cluster is closed and a fresh one
	// started (Session.Notes).
	Notes io.Writer

	mu   sync.Mutex
	free []*Session
	all  []*Session
}

var _ explore.Runner = (*EpisodeRunner)(nil)

func (r *EpisodeRunner) Run(ctx context.Context, sc *scenario.Scenario) (*explore.Run, error) {
	s := r.take()
	defer r.put(s)
	start := time.Now()
	res, dir, err := s.Run(ctx, sc)
	return explore.ReadBack(res, dir, time.Since(start), err)
}

// Exact is false: a real run does not replay.
func (r *EpisodeRunner) Exact() bool { return false }

// Name is "servers".
func (r *EpisodeRunner) Name() string { return "servers" }

func (r *EpisodeRunner) take() *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		s := r.free[n-1]
		r.free = r.free[:n-1]
		return s
	}
	s := NewSession(r.Options, 0)
	s.Notes = r.Notes
	r.all = append(r.all, s)
	return s
}

func (r *EpisodeRunner) put(s *Session) {
	r.mu.Lock()
	r.free = append(r.free, s)
	r.mu.Unlock()
}

// Close stops every session's cluster.
func (r *EpisodeRunner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.all {
		_ = s.Close()
	}
	r.all, r.free = nil, nil
	return nil
}
