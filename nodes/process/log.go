package process

import (
	"io"
	"log/slog"
	"strings"
)

// NewLog returns a node program's log: one JSON object per line on w, with
// the time ("time", RFC 3339 to the nanosecond), the level ("level":
// "debug", "info", "warn" or "error"), the line's text ("message") and its
// fields, the algorithm's name ("algo") first among them:
//
//	{"time":"2026-01-02T15:04:05.123456789Z","level":"info","message":"started","algo":"bully","node":"n1","why":"at init"}
//
// It is the standard library's JSON handler, with the keys and level names
// coup's node logs have always had; debug lines are kept.
func NewLog(w io.Writer, algo string) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: logKeys})
	return slog.New(h).With("algo", algo)
}

// logKeys renames the handler's own keys: the level in lower case, the
// text under "message". A field of a node's own may be called "msg" (a
// message id, a number); the handler's text is the only "msg" that is a
// string.
func logKeys(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch {
	case a.Key == slog.LevelKey:
		if l, ok := a.Value.Any().(slog.Level); ok {
			return slog.String(slog.LevelKey, strings.ToLower(l.String()))
		}
	case a.Key == slog.MessageKey && a.Value.Kind() == slog.KindString:
		return slog.Attr{Key: "message", Value: a.Value}
	}
	return a
}
