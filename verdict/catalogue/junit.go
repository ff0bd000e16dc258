package catalogue

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/coupharness/coup/internal/console"
	"github.com/coupharness/coup/verdict"
)

// The JUnit XML file: the common schema that CI systems read (Jenkins,
// GitLab, GitHub's test-report actions, Surefire's readers): testsuites,
// testsuite, testcase with name, classname and time, and a failure, an
// error or skipped in a case that did not pass.
//
// A run maps to a test case: its name is the scenario's (with "run k of
// N" under --repeat), its classname the folder of the scenario file, and
// the cases of one folder form one test suite. A run as expected passes;
// an unexpected one is a failure whose message is the first note (the
// check's sentence saying why), all notes in its text; a run with no
// verdict (exit 3: interrupted, or a check could not decide) and a run
// whose nodes failed to start (exit 2) are errors, since neither judged
// the algorithm; a run the catalogue never started is skipped. Every case
// has its store folder and the console summary in system-out.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`

	ns int64 // the cases' time, summed
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// The types of a failure or an error in the JUnit file.
const (
	TypeUnexpected = "unexpected"
	TypeUnknown    = "unknown"
	TypeNodeStart  = "node-start"
)

// WriteJUnit writes the catalogue as JUnit XML.
func (s *Summary) WriteJUnit(w io.Writer) error {
	doc := junitSuites{Name: "coup", Time: seconds(s.Duration)}
	index := map[string]int{} // classname -> suite
	for i := range s.Runs {
		r := &s.Runs[i]
		class := r.classname()
		k, ok := index[class]
		if !ok {
			k = len(doc.Suites)
			index[class] = k
			doc.Suites = append(doc.Suites, junitSuite{Name: console.Printable(class)})
		}
		suite := &doc.Suites[k]
		c := r.testCase()
		suite.Tests++
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Error != nil:
			suite.Errors++
		case c.Skipped != nil:
			suite.Skipped++
		}
		if suite.Timestamp == "" && !r.Started.IsZero() {
			suite.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
		}
		suite.ns += r.Duration
		suite.Cases = append(suite.Cases, c)
	}
	for i := range doc.Suites {
		su := &doc.Suites[i]
		if su.Timestamp == "" {
			su.Timestamp = s.Started.UTC().Format("2006-01-02T15:04:05")
		}
		su.Time = seconds(su.ns)
		doc.Tests += su.Tests
		doc.Failures += su.Failures
		doc.Errors += su.Errors
		doc.Skipped += su.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

// testCase is the run as a JUnit test case.
func (r *Run) testCase() junitCase {
	name := r.Scenario
	if r.Of > 1 {
		name = fmt.Sprintf("%s (run %d of %d)", r.Scenario, r.Repeat, r.Of)
	}
	c := junitCase{Name: console.Printable(name), Classname: console.Printable(r.classname()), Time: seconds(r.Duration)}
	if r.Outcome == NotRun {
		c.Skipped = &junitSkipped{Message: "not run: the catalogue was interrupted before this run"}
		return c
	}
	var out strings.Builder
	if r.Store != "" {
		fmt.Fprintf(&out, "store: %s\n", console.Printable(r.Store))
	}
	if r.summary != "" {
		out.WriteString("\n" + r.summary)
	} else if r.Error != "" {
		fmt.Fprintf(&out, "error: %s\n", r.Error)
	}
	c.SystemOut = out.String()
	problem := func(typ string) *junitProblem {
		p := &junitProblem{Type: typ}
		lines := r.Notes
		if r.Error != "" && (typ == TypeNodeStart || len(lines) == 0) {
			lines = append([]string{r.Error}, lines...)
		}
		if len(lines) > 0 {
			p.Message = lines[0]
		}
		p.Text = strings.Join(lines, "\n")
		if r.Store != "" {
			p.Text += "\nstore: " + console.Printable(r.Store)
		}
		return p
	}
	switch r.ExitCode {
	case verdict.ExitOK:
	case verdict.ExitUnexpected:
		c.Failure = problem(TypeUnexpected)
	case verdict.ExitInput:
		c.Error = problem(TypeNodeStart)
	default:
		c.Error = problem(TypeUnknown)
	}
	return c
}

// seconds writes a duration in nanoseconds as seconds, to the
// millisecond, as JUnit's time attributes are.
func seconds(ns int64) string {
	return fmt.Sprintf("%.3f", time.Duration(ns).Seconds())
}
