package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/coupharness/coup/verdict"
)

// WriteCheckFiles writes the documents the checks made (such as porcupine's
// visualisation) into dir (a run's folder, or wherever its report goes, since
// the report links them by name), each under its base name.
func WriteCheckFiles(dir string, res *verdict.Results) error {
	for _, name := range res.Order {
		for _, f := range res.Checks[name].Files {
			base := unsafeFileChars.ReplaceAllString(filepath.Base(f.Name), "_")
			if err := os.WriteFile(filepath.Join(dir, base), f.Data, 0o644); err != nil {
				return fmt.Errorf("write %s: %w", base, err)
			}
		}
	}
	return nil
}

// unsafeFileChars are the characters a check's file name may not bring
// into a folder name.
var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
