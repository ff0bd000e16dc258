package main

import (
	"os"
	"path/filepath"
)

// StoreEnv names the environment variable that chooses the store's root
// when --store is not given.
const StoreEnv = "COUP_STORE"

// storeUsage is the usage of every command's --store flag.
const storeUsage = "the store's root `folder` (default: $" + StoreEnv + ", else store/ at the root of the git checkout, or else the Go module, that holds the working folder, else ./store)"

// defaultStore is where a run is stored when --store is not given. A store
// relative to the working folder scattered store/ folders over a checkout,
// one in every folder a command was run from; so the store has one home:
//   - $COUP_STORE, when it is set and not empty, as written;
//   - else store/ at the root of the git checkout that holds the working
//     folder (the nearest folder above it, itself included, that has a
//     .git, a folder or, in a worktree or a submodule, a file), where a
//     checkout's .gitignore names it once;
//   - else store/ at the root of the Go module that holds it (the nearest
//     folder with a go.mod), for a module unpacked outside git;
//   - else ./store, as before.
//
// A root above the working folder is given as an absolute path; a root
// that is the working folder itself, as "store", as before, so that the
// paths in summary.json and the JUnit file stay relative when coup runs
// from a checkout's root. The console prints the absolute path of every
// run's folder either way.
func defaultStore() string {
	if v := os.Getenv(StoreEnv); v != "" {
		return v
	}
	wd, err := os.Getwd()
	if err != nil {
		return "store"
	}
	root := enclosing(wd, ".git")
	if root == "" {
		root = enclosing(wd, "go.mod")
	}
	if root == "" || root == wd {
		return "store"
	}
	return filepath.Join(root, "store")
}

// enclosing returns the nearest folder from dir upward, dir included,
// that holds an entry named name, or "" when none does.
func enclosing(dir, name string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// absPath is p as an absolute path, for the console; p itself when the
// working folder cannot be read.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
