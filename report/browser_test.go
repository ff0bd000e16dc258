package report_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coupharness/coup/checks"
	"github.com/coupharness/coup/internal/needs"
	"github.com/coupharness/coup/lifecycle"
	"github.com/coupharness/coup/scenario"
	"github.com/coupharness/coup/sim"
)

// chromium finds a headless Chromium: $COUP_CHROMIUM, or chromium on the
// path under one of its usual names.
func chromium(t *testing.T) string {
	if p := os.Getenv("COUP_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	needs.Skip(t, "chromium", "headless Chromium not found (or set COUP_CHROMIUM)")
	return ""
}

// runChromium runs Chromium headless on a page with extra flags and
// returns its output and its log; it kills the browser's whole process
// group when it ends, so that no helper process outlives the test (its
// crash handlers, in groups of their own, exit with the browser).
func runChromium(t *testing.T, bin, url string, flags ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	// Its own home, so that nothing (profiles, crash reports) is written
	// to the user's.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_CACHE_HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &log
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // any helper left behind
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, tail(log.String(), 2000))
	}
	return out.String(), log.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// scriptErrors are the uncaught errors of the page's script in
// Chromium's log.
var scriptErrors = regexp.MustCompile(`CONSOLE[^\n]*Uncaught[^\n]*`)

// The report of a violation scenario (the replaced bully coordinator: two
// leaders for a few milliseconds of a 1.2s run) opens in a browser, draws
// the space-time diagram and the magnified interval, runs its script
// without error, and draws a window of the reader's own from the address.
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	sc, err := scenario.Load("../scenarios/bully-coordinator-replaced.toml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := sim.Simulate(sc, sc.Seed, sim.Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	two := out.Results.Checks["two-leaders"]
	if two.Valid != checks.False || two.Interval == nil {
		t.Fatalf("the simulated run's two-leaders is %v (%s): this test needs its violation", two.Valid, two.Explanation)
	}
	page := filepath.Join(out.Dir, lifecycle.ReportFile)
	url := "file://" + page

	// The page as the browser builds it, opened on a window of the
	// reader's own (from the address), which the script draws.
	from, to := float64(two.Interval.From)/1e9-0.01, float64(two.Interval.To)/1e9+0.01
	dom, log := runChromium(t, bin, url+"#t="+secsArg(from)+"-"+secsArg(to), "--dump-dom")
	if m := scriptErrors.FindAllString(log, -1); len(m) > 0 {
		t.Errorf("the page's script failed: %s", strings.Join(m, "\n"))
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<body[^>]* data-script="ready"`),                                       // the script ran to its end
		regexp.MustCompile(`<span class="badge sim" id="simulated"[^>]*>simulated, seed 7</span>`), // the run is marked simulated
		regexp.MustCompile(`<svg id="timeline-svg" class="timeline"`),
		regexp.MustCompile(`<svg id="st-0" class="spacetime`),                                          // the diagram
		regexp.MustCompile(`<figure class="zoom-view" id="zoom-two-leaders" data-check="two-leaders"`), // the magnified interval
		regexp.MustCompile(`<svg id="zoom-svg-zoom-two-leaders" class="zoom"`),
		regexp.MustCompile(`<a href="#zoom-two-leaders"><text`),
	} {
		if !want.MatchString(dom) {
			t.Errorf("the page in the browser has no match for %s", want)
		}
	}
	zoom := dom[strings.Index(dom, `<svg id="zoom-svg-zoom-two-leaders"`):]
	zoom = zoom[:strings.Index(zoom, "</svg>")]
	if !strings.Contains(zoom, `class="violation" data-check="two-leaders"`) || strings.Count(zoom, `class="msg`) == 0 {
		t.Errorf("the magnified view does not outline the interval and draw its messages")
	}
	if n := strings.Count(dom[:strings.Index(dom, `id="stp-custom"`)], `class="msg`); n < 50 {
		t.Errorf("the diagrams draw %d arrows, want the run's messages", n)
	}

	custom := regexp.MustCompile(`(?s)<div class="pane drawing" id="stp-custom">(.*?)</div>`).FindStringSubmatch(dom)
	if custom == nil || !strings.Contains(custom[1], `class="spacetime custom"`) || !strings.Contains(custom[1], `class="msg`) {
		t.Errorf("the script did not draw the window from the address")
	}
	if !regexp.MustCompile(`<input type="radio" name="stw" id="stw-custom"[^>]*checked`).MatchString(dom) &&
		!strings.Contains(dom, `id="stl-custom">your window: `) {
		t.Errorf("the reader's window is not shown")
	}

	// A screenshot: the drawings are painted, the nemesis's yellow and the
	// violations' vermilion among them.
	shot := filepath.Join(t.TempDir(), "report.png")
	runChromium(t, bin, url, "--screenshot="+shot, "--window-size=1400,3000")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 3000 {
		t.Errorf("screenshot %v, want 1400×3000", b)
	}
	for name, want := range map[string][3]uint8{"violation vermilion": {0xD5, 0x5E, 0x00}, "node blue": {0x00, 0x72, 0xB2}} {
		if n := pixelsNear(img, want, 40); n < 200 {
			t.Errorf("the screenshot has %d pixels of the %s, want at least 200", n, name)
		}
	}
}

// pixelsNear counts the pixels of img within dist of colour c.
func pixelsNear(img image.Image, c [3]uint8, dist int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := abs(int(r>>8)-int(c[0])) + abs(int(g>>8)-int(c[1])) + abs(int(bl>>8)-int(c[2]))
			if d <= dist {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// secsArg formats seconds for the page's address.
func secsArg(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }
