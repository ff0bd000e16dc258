package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"time"
)

// reportPipe is the named pipe through which the pinger hands its figures
// to the benchmark, outside the path it measures: neither the relay nor
// the harness carries them, and nothing polls for them.
type reportPipe struct {
	path string
	f    *os.File
	got  chan reportResult
}

type reportResult struct {
	f   Figures
	err error
}

// newReportPipe makes a named pipe at path and opens it for reading. It is
// opened for writing too, so that the open does not wait for the pinger
// and a pinger that closes it does not end the reading.
func newReportPipe(path string) (*reportPipe, error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("make the report pipe: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open the report pipe: %w", err)
	}
	rp := &reportPipe{path: path, f: f, got: make(chan reportResult, 1)}
	go func() {
		line, err := bufio.NewReader(f).ReadBytes('\n')
		if err != nil {
			rp.got <- reportResult{err: fmt.Errorf("read the report: %w", err)}
			return
		}
		var fig Figures
		if err := json.Unmarshal(line, &fig); err != nil {
			rp.got <- reportResult{err: fmt.Errorf("the probe's report %.200q: %w", line, err)}
			return
		}
		rp.got <- reportResult{f: fig}
	}()
	return rp, nil
}

// reportGrace is how long wait still waits for a report once the run that
// makes it has ended.
const reportGrace = time.Second

// wait returns the figures once the pinger has written them, or an error
// when ctx ends first or done is closed (the run that should have produced
// them is over).
func (rp *reportPipe) wait(ctx context.Context, done <-chan struct{}) (Figures, error) {
	select {
	case r := <-rp.got:
		return r.f, r.err
	case <-done:
		// A report written just before the run ended may still be on its
		// way through the pipe.
		select {
		case r := <-rp.got:
			return r.f, r.err
		case <-time.After(reportGrace):
			return Figures{}, fmt.Errorf("the probe ended without reporting")
		}
	case <-ctx.Done():
		return Figures{}, ctx.Err()
	}
}

// close closes and removes the pipe; a reader still waiting ends.
func (rp *reportPipe) close() {
	rp.f.Close()
	os.Remove(rp.path)
}
