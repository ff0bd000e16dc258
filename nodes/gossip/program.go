package gossip

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ProgramName is the node program's name: its folder beside this file, the
// executable built there, and the command installed from it.
const ProgramName = "coup-memberlist"

// Program returns the path of the memberlist node program's executable,
// ready to run: it speaks the node protocol on stdin and stdout and logs on
// stderr, as coup's own node program does.
//
// A coup built from a clone (go run ./cmd/coup, go build, go test) builds
// the program from that clone's coup-memberlist/ folder on first use, and
// again whenever a Go file, go.mod or go.sum of the clone is newer than
// the executable; logf says so before it starts, since a first build
// downloads memberlist and may take a minute. It builds into a folder of
// its own and then renames, so that runs starting together never run a
// half-written executable. A coup without its clone (built from the module
// cache, or with -trimpath) runs the coup-memberlist beside its own
// executable, or else on the PATH.
func Program(ctx context.Context, logf func(format string, args ...any)) (string, error) {
	if src, ok := sourceDir(); ok {
		return build(ctx, src, logf)
	}
	return installed()
}

// installed returns the program installed beside this executable, or else
// on the PATH.
func installed() (string, error) {
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			if p := filepath.Join(filepath.Dir(exe), ProgramName); isExecutable(p) {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(ProgramName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the memberlist node is a program of its own, %s, which is neither beside this coup executable nor on the PATH, and this coup was not built from a clone of coup: install it from a clone (cd nodes/gossip/%s && go install .)", ProgramName, ProgramName)
}

// sourceDir is the program's module folder in the clone this code was
// compiled from, if the compiler recorded that clone's path and the folder
// is there.
func sourceDir() (string, bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", false // -trimpath: no clone to build from
	}
	src := filepath.Join(filepath.Dir(file), ProgramName)
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		return "", false // a module cache's copy of coup: nested modules are not in it
	}
	return src, true
}

// build builds the program in src when its executable is missing or
// older than a source of the clone, and returns the executable's path.
func build(ctx context.Context, src string, logf func(format string, args ...any)) (string, error) {
	bin := filepath.Join(src, ProgramName)
	root := filepath.Join(src, "..", "..", "..") // the clone: src is nodes/gossip/coup-memberlist
	newer, err := newerSource(bin, root, src)
	if err != nil {
		return "", err
	}
	if newer == "" {
		return bin, nil
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("the memberlist node program (%s) needs building, and the go command is not on the PATH: %w", src, err)
	}
	if newer == bin {
		logf("building the memberlist node program in %s (first use)", src)
	} else {
		logf("building the memberlist node program in %s (%s changed since it was built)", src, newer)
	}
	tmp, err := os.MkdirTemp(src, ".build-")
	if err != nil {
		return "", fmt.Errorf("build the memberlist node program: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(tmp, ProgramName), ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("build the memberlist node program (go build in %s): %w\n%s", src, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(filepath.Join(tmp, ProgramName), bin); err != nil {
		return "", fmt.Errorf("build the memberlist node program: %w", err)
	}
	return bin, nil
}

// newerSource returns a source of the program newer than bin ("" when
// none is, bin itself when it does not exist): a Go file, go.mod or go.sum
// of the clone at root, outside the clone's other nested modules (whose
// code the program does not build) and outside hidden folders, stores and
// testdata.
func newerSource(bin, root, src string) (string, error) {
	st, err := os.Stat(bin)
	if errors.Is(err, fs.ErrNotExist) {
		return bin, nil
	}
	if err != nil {
		return "", err
	}
	built := st.ModTime()
	var newer string
	errFound := errors.New("found")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root || path == src {
				return nil
			}
			if strings.HasPrefix(name, ".") || name == "store" || name == "testdata" || isFile(filepath.Join(path, "go.mod")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && name != "go.mod" && name != "go.sum" {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(built) {
			newer = path
			return errFound
		}
		return nil
	})
	if err != nil && err != errFound {
		return "", fmt.Errorf("look for sources of the memberlist node program newer than %s: %w", bin, err)
	}
	return newer, nil
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
