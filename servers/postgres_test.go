package servers

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/coupharness/coup/workloads"
)

// fakePg is a PostgreSQL server of a few lines, for the client's tests:
// it takes any login, answers SHOW transaction_read_only with readOnly,
// and every other statement (the simple protocol's Query) with what
// answer gives: messages to send before ReadyForQuery, or, when it
// returns nil, no answer at all; a FATAL ErrorResponse ends the
// connection, as PostgreSQL's does.
type fakePg struct {
	ln       net.Listener
	readOnly bool
	answer   func(sql string) []pgproto3.BackendMessage

	mu       sync.Mutex
	conns    []net.Conn
	logins   int
	statemts []string
}

func newFakePg(t *testing.T, readOnly bool, answer func(sql string) []pgproto3.BackendMessage) *fakePg {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePg{ln: ln, readOnly: readOnly, answer: answer}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			go f.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			c.Close()
		}
	})
	return f
}

func (f *fakePg) addr() string { return f.ln.Addr().String() }

func (f *fakePg) serve(c net.Conn) {
	defer c.Close()
	b := pgproto3.NewBackend(c, c)
	m, err := b.ReceiveStartupMessage()
	if _, ok := m.(*pgproto3.StartupMessage); err != nil || !ok {
		return // a cancel request (of a statement that timed out) is no login
	}
	f.mu.Lock()
	f.logins++
	f.mu.Unlock()
	b.Send(&pgproto3.AuthenticationOk{})
	for _, p := range [][2]string{{"server_version", "15.18"}, {"client_encoding", "UTF8"}, {"standard_conforming_strings", "on"}} {
		b.Send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	b.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 1}})
	b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if b.Flush() != nil {
		return
	}
	for {
		msg, err := b.Receive()
		if err != nil {
			return
		}
		q, ok := msg.(*pgproto3.Query)
		if !ok {
			return // Terminate, or what the client never sends here
		}
		var out []pgproto3.BackendMessage
		if q.String == "show transaction_read_only" {
			v := "off"
			if f.readOnly {
				v = "on"
			}
			out = pgRows("transaction_read_only", 25, v)
			out = append(out, &pgproto3.CommandComplete{CommandTag: []byte("SHOW")})
		} else {
			f.mu.Lock()
			f.statemts = append(f.statemts, q.String)
			f.mu.Unlock()
			if out = f.answer(q.String); out == nil {
				continue // no answer: the client waits
			}
		}
		fatal := false
		for _, m := range out {
			b.Send(m)
			if e, ok := m.(*pgproto3.ErrorResponse); ok && e.Severity == "FATAL" {
				fatal = true
			}
		}
		if !fatal {
			b.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		}
		if b.Flush() != nil || fatal {
			return
		}
	}
}

// pgRows is a row description of one text column of the type oid, and
// a row for each value.
func pgRows(name string, oid uint32, values ...string) []pgproto3.BackendMessage {
	out := []pgproto3.BackendMessage{&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte(name), DataTypeOID: oid, DataTypeSize: -1, TypeModifier: -1}}}}
	for _, v := range values {
		out = append(out, &pgproto3.DataRow{Values: [][]byte{[]byte(v)}})
	}
	return out
}

func pgDone(tag string) []pgproto3.BackendMessage {
	return []pgproto3.BackendMessage{&pgproto3.CommandComplete{CommandTag: []byte(tag)}}
}

func pgFail(severity, code, text string) []pgproto3.BackendMessage {
	return []pgproto3.BackendMessage{&pgproto3.ErrorResponse{Severity: severity, SeverityUnlocalized: severity, Code: code, Message: text}}
}

// The client finds the host that takes writes among every host, its own
// first, and reads each answer of PostgreSQL's as the workload's
// outcome: acknowledged on the commit's answer, definite where the
// server refused the statement or no host took writes, unknown where
// the backend ended or nothing answered; it keeps its connection after
// a refusal, and connects anew after anything else, or after a refusal
// that says the host no longer takes writes.
func TestPostgresClientOutcomes(t *testing.T) {
	add := workloads.Op{Process: "c1", F: workloads.FAdd, Fields: map[string]any{"element": 7}}
	read := workloads.Op{Process: "c1", F: workloads.FRead, Fields: map[string]any{}}
	cas := workloads.Op{Process: "c1", F: workloads.FCas, Fields: map[string]any{"key": 1, "from": 2, "to": 3}}
	for _, tt := range []struct {
		name    string
		op      workloads.Op
		answers []func(sql string) []pgproto3.BackendMessage // one per operation, in turn
		// want is each operation's outcome: its answer's body, or
		// "definite: …" or "unknown: …" with a part of its error.
		want   []string
		logins int // at the primary
	}{
		{"an insert acknowledged on its commit, the connection kept", add,
			[]func(string) []pgproto3.BackendMessage{
				func(string) []pgproto3.BackendMessage { return pgDone("INSERT 0 1") },
				func(string) []pgproto3.BackendMessage { return pgDone("INSERT 0 0") }},
			[]string{`{"served_by":"n2","type":"add_ok"}`, `{"served_by":"n2","type":"add_ok"}`}, 1},
		{"a statement refused, the connection kept", add,
			[]func(string) []pgproto3.BackendMessage{
				func(string) []pgproto3.BackendMessage { return pgFail("ERROR", "53100", "could not extend file") },
				func(string) []pgproto3.BackendMessage { return pgDone("INSERT 0 1") }},
			[]string{"definite: could not extend file", `{"served_by":"n2","type":"add_ok"}`}, 1},
		{"a primary turned read-only: definite, and the next connects anew", add,
			[]func(string) []pgproto3.BackendMessage{
				func(string) []pgproto3.BackendMessage {
					return pgFail("ERROR", "25006", "cannot execute INSERT in a read-only transaction")
				},
				func(string) []pgproto3.BackendMessage { return pgDone("INSERT 0 1") }},
			[]string{"definite: read-only transaction", `{"served_by":"n2","type":"add_ok"}`}, 2},
		{"a backend ended by a shutdown: unknown, and the next connects anew", add,
			[]func(string) []pgproto3.BackendMessage{
				func(string) []pgproto3.BackendMessage {
					return pgFail("FATAL", "57P01", "terminating connection due to administrator command")
				},
				func(string) []pgproto3.BackendMessage { return pgDone("INSERT 0 1") }},
			[]string{"unknown: administrator command", `{"served_by":"n2","type":"add_ok"}`}, 2},
		{"no answer within the operation's time: unknown, and the next connects anew", add,
			[]func(string) []pgproto3.BackendMessage{
				func(string) []pgproto3.BackendMessage { return nil },
				func(string) []pgproto3.BackendMessage { return pgDone("INSERT 0 1") }},
			[]string{"unknown: ", `{"served_by":"n2","type":"add_ok"}`}, 2},
		{"the set read in order", read,
			[]func(string) []pgproto3.BackendMessage{func(string) []pgproto3.BackendMessage {
				return append(pgRows("element", 20, "3", "11", "12"), pgDone("SELECT 3")...)
			}},
			[]string{`{"served_by":"n2","type":"read_ok","value":[3,11,12]}`}, 1},
		{"a compare-and-set that set, found another value, found no key", cas,
			[]func(string) []pgproto3.BackendMessage{
				func(string) []pgproto3.BackendMessage { return pgCas("1", "t") },
				func(string) []pgproto3.BackendMessage { return pgCas("0", "t") },
				func(string) []pgproto3.BackendMessage { return pgCas("0", "f") }},
			[]string{`{"served_by":"n2","type":"cas_ok"}`, `"code":22`, `"code":20`}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			next := 0
			replica := newFakePg(t, true, func(string) []pgproto3.BackendMessage {
				return pgFail("ERROR", "25006", "a replica took a statement")
			})
			primary := newFakePg(t, false, func(sql string) []pgproto3.BackendMessage {
				mu.Lock()
				defer mu.Unlock()
				a := tt.answers[min(next, len(tt.answers)-1)]
				next++
				return a(sql)
			})
			c := newPgKV(map[string]string{"n1": replica.addr(), "n2": primary.addr()}, "e1-")
			c.names[primary.addr()] = "n2"
			defer c.close()
			for i, want := range tt.want {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				body, err := c.Do(ctx, "n1", tt.op)
				cancel()
				got, kind := string(body), ""
				switch {
				case err != nil && errors.Is(err, errDefinite):
					got, kind = err.Error(), "definite: "
				case err != nil:
					got, kind = err.Error(), "unknown: "
				}
				if !strings.HasPrefix(want, kind) || !strings.Contains(got, strings.TrimPrefix(want, kind)) {
					t.Errorf("operation %d: %s%s, want %s", i+1, kind, got, want)
				}
			}
			primary.mu.Lock()
			defer primary.mu.Unlock()
			if primary.logins != tt.logins {
				t.Errorf("%d logins at the primary, want %d", primary.logins, tt.logins)
			}
			for _, s := range primary.statemts {
				if !strings.Contains(s, "'e1-'") {
					t.Errorf("a statement %q without the client's prefix", s)
				}
			}
		})
	}
}

func pgCas(updated, exists string) []pgproto3.BackendMessage {
	return []pgproto3.BackendMessage{
		&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
			{Name: []byte("count"), DataTypeOID: 20, DataTypeSize: 8, TypeModifier: -1},
			{Name: []byte("exists"), DataTypeOID: 16, DataTypeSize: 1, TypeModifier: -1}}},
		&pgproto3.DataRow{Values: [][]byte{[]byte(updated), []byte(exists)}},
		&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")},
	}
}

// With no host that takes writes (every one a replica, or unreachable),
// an operation is definite: nothing was sent.
func TestPostgresClientNoPrimary(t *testing.T) {
	replica := newFakePg(t, true, func(string) []pgproto3.BackendMessage { return pgDone("INSERT 0 1") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // refuses
	c := newPgKV(map[string]string{"n1": gone, "n2": replica.addr()}, "")
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	body, err := c.Do(ctx, "n1", workloads.Op{Process: "c1", F: workloads.FAdd, Fields: map[string]any{"element": 1}})
	if err == nil || !errors.Is(err, errDefinite) {
		t.Fatalf("answer %s, error %v; want a definite error", body, err)
	}
	if replica.logins != 1 || len(replica.statemts) != 0 {
		t.Errorf("the replica saw %d logins and statements %q, want 1 and none", replica.logins, replica.statemts)
	}
}

// The connection string names every host, the client's own member
// first, and asks for one that takes writes.
func TestPostgresConnString(t *testing.T) {
	c := newPgKV(map[string]string{"n1": "10.77.0.1:20002", "n2": "10.77.0.2:20002", "n10": "10.77.0.10:20002"}, "")
	got := c.connString("n2", "c5")
	want := "postgres://postgres:coup-postgres@10.77.0.2:20002,10.77.0.1:20002,10.77.0.10:20002/postgres?application_name=c5&sslmode=disable&target_session_attrs=read-write"
	if got != want {
		t.Errorf("connection string\n%s, want\n%s", got, want)
	}
	cfg, err := pgConfig(got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hosts := 1 + len(cfg.Fallbacks); hosts != 3 || cfg.Host != "10.77.0.2" || cfg.ValidateConnect == nil {
		t.Errorf("pgx reads %d hosts, the first %s, a check of each %v; want 3, 10.77.0.2, one", hosts, cfg.Host, cfg.ValidateConnect != nil)
	}
}
