package servers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coupharness/coup/scenario"
)

// A preset's server built from its source ([server] version): NATS's
// nats-server of another version than Debian's, built with go install
// from its Go module (github.com/nats-io/nats-server/v2@v2.15.2, served
// by the module proxy) into coup's cache,
//
//	$XDG_CACHE_HOME/coup/servers/nats-server@v2.15.2/nats-server   (~/.cache without XDG_CACHE_HOME)
//
// on first use, and run from there ever after. The module is built as a
// module of its own (go install PATH@VERSION), never as a dependency of
// coup's go.mod. go install writes into a folder of its own inside the
// cache folder, then renames, so that runs starting together never run
// a half-written executable; within one coup, one build at a time.

// buildMu keeps one coup to one build at a time.
var buildMu sync.Mutex

// serverCacheDir is where built servers are kept: COUP_CACHE_DIR, else
// coup/servers in the user's cache folder.
func serverCacheDir() (string, error) {
	if d := os.Getenv("COUP_CACHE_DIR"); d != "" {
		return filepath.Join(d, "servers"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder to build the server in (set COUP_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "coup", "servers"), nil
}

// builtProgram is the executable go install makes of a module: its last
// path element, without a major version suffix (nats-server of
// github.com/nats-io/nats-server/v2).
func builtProgram(module string) string {
	base := path.Base(module)
	if strings.HasPrefix(base, "v") && len(base) > 1 && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(module))
	}
	return base
}

// buildServer builds the scenario's server of its version, when it
// gives one, and runs it in place of the installed one (Server.Program,
// set here: what every rendering of the command then names). The
// returned step says what it did, for an error.
func (r *run) buildServer(ctx context.Context) (string, error) {
	if r.sv.Version == "" {
		return "", nil
	}
	module, ok := scenario.PresetModule(r.sv.Preset)
	if !ok {
		return "", nil // refused by the scenario's validation
	}
	prog := builtProgram(module)
	step := fmt.Sprintf("building %s %s from %s", prog, r.sv.Version, module)
	bin, err := buildModule(ctx, module, r.sv.Version, func(format string, args ...any) { r.progress(format, args...) })
	if err != nil {
		return step, err
	}
	r.sv.Program = bin
	return step, nil
}

// buildModule returns the executable of module at version, built into
// the cache on first use; logf says when it builds, and how long it
// took.
func buildModule(ctx context.Context, module, version string, logf func(format string, args ...any)) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	cache, err := serverCacheDir()
	if err != nil {
		return "", err
	}
	prog := builtProgram(module)
	dir := filepath.Join(cache, prog+"@v"+version)
	bin := filepath.Join(dir, prog)
	if isExecutable(bin) {
		return bin, nil
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%s %s needs building from %s, and the go command is not on the PATH: %w", prog, version, module, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", prog, err)
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", prog, err)
	}
	defer os.RemoveAll(tmp)
	logf("building %s %s (go install %s@v%s, into %s): first use, a minute or two", prog, version, module, version, dir)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goCmd, "install", module+"@v"+version)
	// A module of its own: outside any module (GOFLAGS=-mod=mod would
	// not apply), with GOBIN the build's folder.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GO111MODULE=on", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("build %s (go install %s@v%s): %w\n%s", prog, module, version, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(filepath.Join(tmp, prog), bin); err != nil {
		return "", fmt.Errorf("build %s: %w", prog, err)
	}
	logf("built %s %s in %s: %s", prog, version, time.Since(start).Round(100*time.Millisecond), bin)
	return bin, nil
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
