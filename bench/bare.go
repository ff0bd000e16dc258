package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/coupharness/coup/nodes/wire"
)

// The startup part's floor: the same start as coup's, with nothing of
// coup's in it. A launcher process (bench-probe bare-start, started as
// coup run is) starts n processes of this same binary (bench-probe
// answer) at once, each as coup starts a node: in a process group of its
// own that dies with the launcher, with pipes for stdin and stdout, its
// stderr written to a log file of its own, COUP_RUN and COUP_NODE in its
// environment. It writes each one line as long as the init coup would
// send it (its id and every node's), and reads one line back, as coup
// waits for init_ok; once every one has answered it prints upMarker, as
// coup run does, then closes their stdins and waits for each. The ratio of
// coup's start to this one is what coup itself adds to starting n
// processes and greeting each.
const (
	bareStart  = "bare-start"
	bareAnswer = "answer"
)

// bareStartArgs is the launcher's command line after the probe's.
func bareStartArgs(n int, dir string) []string {
	return []string{bareStart, "--nodes", strconv.Itoa(n), "--dir", dir}
}

// bareStartMain is the launcher (bench-probe bare-start --nodes N --dir D).
func bareStartMain(args []string) int {
	fs := flag.NewFlagSet("bench-probe "+bareStart, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("nodes", 0, "")
	dir := fs.String("dir", "", "")
	if err := fs.Parse(args); err != nil || *n < 1 || *dir == "" || fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench-probe %s: want --nodes N (at least 1) and --dir FOLDER\n", bareStart)
		return 2
	}
	if err := runBareStart(*n, *dir); err != nil {
		fmt.Fprintf(os.Stderr, "bench-probe %s: %v\n", bareStart, err)
		return 1
	}
	return 0
}

// bareInit is the line a bare process is told: coup's init to a built-in
// node of the benchmark's scenario, of the same fields and length: every
// node's name and election id (1..n), the algorithm, the seed, checksums
// on and the start deferred.
type bareInit struct {
	Src  string        `json:"src"`
	Dest string        `json:"dest"`
	Body wire.InitBody `json:"body"`
}

func runBareStart(n int, dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names, ids := make([]string, n), make([]int, n)
	for i := range names {
		names[i], ids[i] = "n"+strconv.Itoa(i+1), i+1
	}
	type started struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		err   error
	}
	results := make(chan started, n)
	for _, name := range names {
		go func() {
			cmd, stdin, err := startBareNode(exe, name, names, ids, dir)
			results <- started{cmd, stdin, err}
		}()
	}
	var all []started
	var errs []error
	for range names {
		s := <-results
		if s.err != nil {
			errs = append(errs, s.err)
			continue
		}
		all = append(all, s)
	}
	if len(errs) == 0 {
		fmt.Println(upMarker)
	}
	for _, s := range all {
		s.stdin.Close()
	}
	for _, s := range all {
		if err := s.cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.cmd.Args, err))
		}
	}
	return errors.Join(errs...)
}

// startBareNode starts one bare process, tells it its line and waits for its
// answer.
func startBareNode(exe, name string, names []string, ids []int, dir string) (*exec.Cmd, io.WriteCloser, error) {
	logf, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "bench-probe", bareAnswer)
	cmd.Env = append(os.Environ(), "COUP_RUN=bare", "COUP_NODE="+name)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	var init bareInit
	init.Src, init.Dest = "coup", name
	init.Body = wire.InitBody{Type: "init", MsgID: 1, NodeID: name, NodeIDs: names, IDs: ids,
		Algorithm: "chang-roberts", Seed: 1, Checksums: true, DeferStart: true}
	line, _ := json.Marshal(init)
	fail := func(err error) (*exec.Cmd, io.WriteCloser, error) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := stdin.Write(append(line, '\n')); err != nil {
		return fail(err)
	}
	if _, err := bufio.NewReader(stdout).ReadBytes('\n'); err != nil {
		return fail(fmt.Errorf("no answer: %w", err))
	}
	return cmd, stdin, nil
}

// bareAnswerMain is a bare process (bench-probe answer): it reads one
// line, answers it with one, and reads its stdin to the end.
func bareAnswerMain() int {
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-probe %s: %v\n", bareAnswer, err)
		return 1
	}
	var init bareInit
	if err := json.Unmarshal(line, &init); err != nil {
		fmt.Fprintf(os.Stderr, "bench-probe %s: %v\n", bareAnswer, err)
		return 1
	}
	fmt.Printf(`{"src":%q,"dest":%q,"body":{"type":"init_ok","in_reply_to":1}}`+"\n", init.Dest, init.Src)
	_, _ = io.Copy(io.Discard, in)
	return 0
}
