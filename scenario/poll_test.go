package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// poll_timeout bounds each question of every poll that gives none of its
// own; its default is poll_every, at most 1s.
func TestPollTimeout(t *testing.T) {
	for _, tt := range []struct {
		extra       string
		server, own time.Duration
	}{
		{"", 100 * time.Millisecond, 100 * time.Millisecond},
		{"poll_every = \"5s\"\n", time.Second, time.Second},
		{"poll_timeout = \"300ms\"\n", 300 * time.Millisecond, 300 * time.Millisecond},
	} {
		src := strings.Replace(goodServer, "peer = [\"peer\"]\n", "peer = [\"peer\"]\n"+tt.extra, 1)
		s, err := Parse("svc.toml", src)
		if err != nil {
			t.Fatalf("%q: %v", tt.extra, err)
		}
		if s.Server.PollTimeout.D != tt.server || s.Server.Poll[0].Timeout.D != tt.own {
			t.Errorf("%q: poll_timeout %s, the poll's %s; want %s and %s", tt.extra, s.Server.PollTimeout.D, s.Server.Poll[0].Timeout.D, tt.server, tt.own)
		}
		back, err := Parse("svc.toml", string(s.Encode("")))
		if err != nil || back.Server.PollTimeout.D != tt.server {
			t.Errorf("%q encoded and parsed again: %v, poll_timeout %v\n%s", tt.extra, err, back, s.Encode(""))
		}
	}
	own := strings.Replace(goodServer, "[[server.poll]]\n", "[[server.poll]]\ntimeout = \"40ms\"\n", 1)
	own = strings.Replace(own, "peer = [\"peer\"]\n", "peer = [\"peer\"]\npoll_timeout = \"300ms\"\n", 1)
	s, err := Parse("svc.toml", own)
	if err != nil {
		t.Fatal(err)
	}
	if s.Server.Poll[0].Timeout.D != 40*time.Millisecond {
		t.Errorf("the poll's own timeout %s, want 40ms", s.Server.Poll[0].Timeout.D)
	}
}

func TestBadPollTimeout(t *testing.T) {
	noPolls := strings.Replace(goodServer, "[[server.poll]]\nhttp = \"http://{{.Addr.status}}/status\"\n  [[server.poll.match]]\n  match = '\"role\":\"(?P<role>[a-z]+)\"'\n", "", 1)
	if noPolls == goodServer {
		t.Fatal("the poll was not taken out")
	}
	for _, tt := range []struct {
		name, src, field, msg string
		line                  int
	}{
		{"zero", strings.Replace(goodServer, "peer = [\"peer\"]\n", "peer = [\"peer\"]\npoll_timeout = \"0s\"\n", 1), "server.poll_timeout", "must be more than zero", 8},
		{"not a duration", strings.Replace(goodServer, "peer = [\"peer\"]\n", "peer = [\"peer\"]\npoll_timeout = \"soon\"\n", 1), "server.poll_timeout", "bad duration", 8},
		{"without polls", strings.Replace(noPolls, "peer = [\"peer\"]\n", "peer = [\"peer\"]\npoll_timeout = \"1s\"\n", 1), "server.poll_timeout", "the server has none", 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.toml", tt.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *scenario.Error", err)
			}
			if e.Field != tt.field || e.Line != tt.line || !strings.Contains(e.Error(), tt.msg) {
				t.Errorf("got %q (line %d, field %q), want line %d, field %q, message with %q", e, e.Line, e.Field, tt.line, tt.field, tt.msg)
			}
		})
	}
}
