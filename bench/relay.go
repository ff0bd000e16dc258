package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coupharness/coup/internal/proc"
)

// FaultMix is the faults of the fault-mix rows, on every link, both in
// coup's nemesis and in the relay.
type FaultMix struct {
	// Loss is the probability that a message is lost.
	Loss float64
	// Duplicate is the probability that a message is delivered twice.
	Duplicate float64
	// Delay and Jitter delay each copy by Delay plus a uniform random
	// [0, Jitter); copies may overtake one another.
	Delay, Jitter time.Duration
}

// DefaultFaults is the fault mix of `coup bench`.
var DefaultFaults = FaultMix{Loss: 0.01, Duplicate: 0.01, Delay: 100 * time.Microsecond, Jitter: 100 * time.Microsecond}

func (m FaultMix) String() string {
	return fmt.Sprintf("loss %g%%, delay %s + [0, %s), duplication %g%%", 100*m.Loss, m.Delay, m.Jitter, 100*m.Duplicate)
}

// runRelay runs the probe on the minimal relay: two child processes, and a
// parent that reads each line one writes and writes it to the other (two
// goroutines, buffered, flushed when nothing more is waiting). With faults,
// each line is dropped, doubled and delayed as the mix says, each copy on
// a timer of its own. It is the floor coup's router is measured against.
func runRelay(ctx context.Context, probe []string, pc probeConfig, faults *FaultMix, dir string, seed uint64) (Figures, error) {
	rp, err := newReportPipe(pc.Report)
	if err != nil {
		return Figures{}, err
	}
	defer rp.close()
	argv := append(append([]string(nil), probe...), pc.args()...)
	names := []string{"n1", "n2"}
	cpu := processCPU()
	var procs []*proc.Proc
	var outs []*bufio.Reader
	defer func() {
		for _, p := range procs {
			_ = p.Kill()
		}
	}()
	for _, name := range names {
		log, err := os.Create(filepath.Join(dir, "relay-"+name+".log"))
		if err != nil {
			return Figures{}, fmt.Errorf("relay: %w", err)
		}
		p, err := proc.Start(proc.Spec{Argv: argv, Log: log})
		log.Close()
		if err != nil {
			return Figures{}, fmt.Errorf("relay: %w", err)
		}
		procs = append(procs, p)
		outs = append(outs, bufio.NewReaderSize(p.Stdout, 64<<10))
	}
	for i, name := range names {
		init := fmt.Sprintf(`{"src":"coup","dest":%q,"body":{"type":"init","msg_id":1,"node_id":%q,"node_ids":["n1","n2"]}}`+"\n", name, name)
		if _, err := io.WriteString(procs[i].Stdin, init); err != nil {
			return Figures{}, fmt.Errorf("relay: write init to %s: %w (see %s)", name, err, filepath.Join(dir, "relay-"+name+".log"))
		}
		line, err := outs[i].ReadSlice('\n')
		if err != nil {
			return Figures{}, fmt.Errorf("relay: %s did not answer init: %w (see %s)", name, err, filepath.Join(dir, "relay-"+name+".log"))
		}
		if !bytes.Contains(line, []byte(`"init_ok"`)) {
			return Figures{}, fmt.Errorf("relay: %s answered init with %.200q", name, line)
		}
	}
	// ended is closed as soon as either child's output ends: a probe that
	// dies will not report.
	var wg sync.WaitGroup
	var once sync.Once
	ended := make(chan struct{})
	for i := range names {
		wg.Add(1)
		go func(from *bufio.Reader, to io.Writer, rng *rand.Rand) {
			defer wg.Done()
			defer once.Do(func() { close(ended) })
			if faults == nil {
				relayLines(from, to)
			} else {
				relayFaulty(from, to, *faults, rng)
			}
		}(outs[i], procs[1-i].Stdin, rand.New(rand.NewPCG(seed, uint64(i))))
	}
	f, err := rp.wait(ctx, ended)
	f.CPU = processCPU() - cpu
	for _, p := range procs {
		_ = p.Kill()
	}
	wg.Wait()
	for _, p := range procs {
		_, _ = p.Wait()
	}
	procs = nil
	return f, err
}

// relayLines copies lines from one child to the other: the relay's whole
// hot path.
func relayLines(from *bufio.Reader, to io.Writer) {
	w := bufio.NewWriterSize(to, 64<<10)
	for {
		line, err := from.ReadSlice('\n')
		if err != nil {
			return
		}
		if _, err := w.Write(line); err != nil {
			return
		}
		if from.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// relayFaulty copies lines with the fault mix applied: the simplest
// faithful way, a timer per copy.
func relayFaulty(from *bufio.Reader, to io.Writer, m FaultMix, rng *rand.Rand) {
	var mu sync.Mutex
	w := bufio.NewWriterSize(to, 64<<10)
	for {
		line, err := from.ReadSlice('\n')
		if err != nil {
			return
		}
		if rng.Float64() < m.Loss {
			continue
		}
		copies := 1
		if rng.Float64() < m.Duplicate {
			copies++
		}
		for range copies {
			d := m.Delay
			if m.Jitter > 0 {
				d += time.Duration(rng.Int64N(int64(m.Jitter)))
			}
			b := append([]byte(nil), line...)
			time.AfterFunc(d, func() {
				mu.Lock()
				defer mu.Unlock()
				if _, err := w.Write(b); err == nil {
					_ = w.Flush()
				}
			})
		}
	}
}
