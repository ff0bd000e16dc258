package lifecycle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/coupharness/coup/history"
	"github.com/coupharness/coup/report"
	"github.com/coupharness/coup/verdict"
)

// The files of a run's store folder.
const (
	HistoryFile = "history.jsonl"
	ResultsFile = "results.json"
	ReportFile  = "report.html"
	HarnessLog  = "harness.log"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// SafeName is a scenario's name as a folder name of the store: characters
// other than letters, digits, '.', '_' and '-' become '_', and a name that
// is empty or starts with a dot ("..", ".", ".hidden") gets a leading '_',
// so that the folder is always a new name inside the store.
func SafeName(name string) string {
	name = unsafeName.ReplaceAllString(name, "_")
	if name == "" || strings.HasPrefix(name, ".") {
		name = "_" + name
	}
	return name
}

// NewRunDir creates store/<scenario>/<timestamp>/ and returns its path. Two
// runs in the same millisecond get distinct folders.
func NewRunDir(root, scenario string, now time.Time) (string, error) {
	base := filepath.Join(root, SafeName(scenario))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("create store: %w", err)
	}
	stamp := now.UTC().Format("20060102T150405.000Z")
	for i := 0; ; i++ {
		dir := filepath.Join(base, stamp)
		if i > 0 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("create store: %w", err)
		}
	}
}

// Save writes a judged run into its folder dir: results.json,
// report.html and the files the checks made, and points
// store/<scenario>/latest at dir. A report that cannot be written is
// passed to logf, not fatal: the verdict stands without it.
func Save(dir string, res *verdict.Results, h *history.History, logf func(format string, args ...any)) error {
	if err := writeResults(dir, res); err != nil {
		return err
	}
	if err := report.WriteFile(filepath.Join(dir, ReportFile), res, h); err != nil {
		logf("report: %v", err)
	}
	if err := report.WriteCheckFiles(dir, res); err != nil {
		return err
	}
	if err := linkLatest(dir); err != nil {
		logf("%v", err) // the run is saved; only the shortcut is missing
	}
	return nil
}

func writeResults(dir string, res *verdict.Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, ResultsFile), append(b, '\n'), 0o644)
}

// linkLatest points store/<scenario>/latest at dir, replacing the link
// atomically. It replaces only a symbolic link: anything else named latest
// is not coup's, and is left alone.
func linkLatest(dir string) error {
	parent := filepath.Dir(dir)
	latest := filepath.Join(parent, "latest")
	if st, err := os.Lstat(latest); err == nil {
		// coup's own link names a sibling folder, nothing else.
		target, err := os.Readlink(latest)
		if st.Mode()&os.ModeSymlink == 0 || err != nil || strings.ContainsRune(target, filepath.Separator) {
			return fmt.Errorf("link latest: %s is not a link coup made; left alone", latest)
		}
	}
	tmp := filepath.Join(parent, fmt.Sprintf(".latest-%d", os.Getpid()))
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
		return fmt.Errorf("link latest: %w", err)
	}
	if err := os.Rename(tmp, latest); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("link latest: %w", err)
	}
	return nil
}
