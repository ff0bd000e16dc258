package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		RunsOn string `yaml:"runs-on"`
		Steps  []struct {
			Name string         `yaml:"name"`
			Uses string         `yaml:"uses"`
			Run  string         `yaml:"run"`
			If   string         `yaml:"if"`
			With map[string]any `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// The workflow of docs/ci.md is the file docs/ci/github-actions.yml, byte
// for byte; it is valid YAML; and every coup command it runs is one of
// coup's, with its real flags, on folders that exist, publishing the
// JUnit file and the store it makes.
func TestGitHubWorkflow(t *testing.T) {
	root := filepath.Join("..", "..")
	file, err := os.ReadFile(filepath.Join(root, "docs", "ci", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```yaml\n")
	if !ok {
		t.Fatal("docs/ci.md has no yaml block")
	}
	block, _, _ = strings.Cut(block, "```")
	if block != string(file) {
		t.Fatal("the workflow in docs/ci.md differs from docs/ci/github-actions.yml")
	}

	var wf workflow
	if err := yaml.Unmarshal(file, &wf); err != nil {
		t.Fatalf("not YAML: %v", err)
	}
	if _, push := wf.On["push"]; !push {
		t.Errorf("the workflow runs on %v, want every push", wf.On)
	}
	if wf.Permissions["checks"] != "write" {
		t.Errorf("permissions %v: publishing a check needs checks: write", wf.Permissions)
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(wf.Jobs))
	}
	var junit, store, packed, published, uploaded string
	uses := map[string]bool{}
	for _, job := range wf.Jobs {
		if job.RunsOn == "" {
			t.Error("a job without runs-on")
		}
		for _, step := range job.Steps {
			if step.Uses != "" {
				name, _, _ := strings.Cut(step.Uses, "@")
				uses[name] = true
			}
			switch {
			case strings.HasPrefix(step.Uses, "mikepenz/action-junit-report@"):
				published, _ = step.With["report_paths"].(string)
			case strings.HasPrefix(step.Uses, "actions/upload-artifact@"):
				uploaded, _ = step.With["path"].(string)
			}
			if (step.Uses != "" && !strings.HasPrefix(step.Uses, "actions/checkout") && !strings.HasPrefix(step.Uses, "actions/setup-go")) ||
				strings.HasPrefix(step.Run, "tar ") {
				if step.If != "success() || failure()" {
					t.Errorf("step %q runs only on success (if: %q): the report and the store matter most when the catalogue fails", step.Name, step.If)
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(step.Run), "\n") {
				w := strings.Fields(line)
				switch {
				case len(w) == 0:
				case w[0] == "go":
					if len(w) != 5 || w[1] != "build" || w[2] != "-o" || w[3] != "coup" || w[4] != "./cmd/coup" {
						t.Errorf("go command %q, want go build -o coup ./cmd/coup", line)
					}
					if _, err := os.Stat(filepath.Join(root, "cmd", "coup", "main.go")); err != nil {
						t.Error(err)
					}
				case w[0] == "./coup":
					j, s := checkCoupLine(t, root, w[1:])
					junit, store = max(junit, j), max(store, s)
				case w[0] == "tar":
					packed = line
				default:
					t.Errorf("unexpected command %q", line)
				}
			}
		}
	}
	for _, u := range []string{"actions/checkout", "actions/setup-go", "mikepenz/action-junit-report", "actions/upload-artifact"} {
		if !uses[u] {
			t.Errorf("the workflow does not use %s", u)
		}
	}
	if junit == "" || published != junit {
		t.Errorf("the catalogue writes JUnit to %q, the report step publishes %q", junit, published)
	}
	if w := strings.Fields(packed); len(w) < 4 || w[2] != uploaded || !strings.Contains(packed, " "+store+" ") && !strings.HasSuffix(packed, " "+store) {
		t.Errorf("the store %q is packed by %q and %q uploaded", store, packed, uploaded)
	}
}

// checkCoupLine checks a coup command line of the workflow against coup's
// own commands and flags, and returns the JUnit file and store it names.
func checkCoupLine(t *testing.T, root string, args []string) (junit, store string) {
	t.Helper()
	if len(args) == 0 {
		t.Error("a bare ./coup")
		return
	}
	if _, ok := lookupCommand(args[0]); !ok {
		t.Errorf("coup %s: no such command", args[0])
		return
	}
	exists := func(paths []string) {
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("coup %s: %v", args[0], err)
			}
		}
	}
	switch args[0] {
	case "run":
		fs, o := newRunFlags()
		pos, _, ok := parseArgs(fs, runUsage, args[1:])
		if !ok || len(pos) == 0 {
			t.Errorf("coup run %q: not coup run's flags", args[1:])
			return
		}
		exists(pos)
		if o.junit == "" {
			t.Error("the catalogue runs without --junit")
		}
		return o.junit, o.store
	case "list":
		pos, _, ok := parseArgs(newFlags("list"), listUsage, args[1:])
		if !ok {
			t.Errorf("coup list %q: not coup list's flags", args[1:])
		}
		exists(pos)
	default:
		t.Errorf("coup %s: the test does not know this command's flags", args[0])
	}
	return "", ""
}
